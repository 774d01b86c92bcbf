import { describe, expect, test } from "bun:test";
import type { EventEnvelope } from "../../db/schema/events.ts";
import { describeEvent } from "./describe-event.ts";

/** An event envelope of `type` carrying `data`, as the relay hands it to describeEvent. */
const envelopeOf = (type: string, data: Record<string, unknown>) =>
  ({
    id: crypto.randomUUID(),
    type,
    createdAt: "2026-11-24T00:00:00.000Z",
    tenantId: "t1",
    mode: "sandbox",
    program: null,
    channel: null,
    data,
  }) as unknown as EventEnvelope;

describe("describeEvent", () => {
  test("a borrower reference stored before the plain-text rule stays on its line: it cannot add lines to a notification or e-mail (found by an audit)", () => {
    const envelope = envelopeOf("loan.funded", {
      loan: {
        id: "l1",
        borrowerRef: "user-1\nYour payout of 9,999.00 USDC is ready: call +1 555 0100",
        principalAmount: "100.00",
        stablecoin: "USDC",
        chain: "POLYGON_AMOY",
      },
    });
    const { body } = describeEvent(envelope);
    const line = body.split("\n").find((l) => l.startsWith("Loan l1"));
    expect(line).toBe("Loan l1 for borrower user-1 Your payout of 9,999.00 USDC is ready: call +1 555 0100: 100.00 USDC on POLYGON_AMOY.");
    expect(body.split("\n").some((l) => l.startsWith("Your payout"))).toBe(false);
  });

  test("a partly paid loan's text says what was paid and what is due now, beside the total; an unpaid or repaid one only the total", () => {
    const envelope = (loan: Record<string, string>) =>
      envelopeOf("loan.overdue", {
        loan: { id: "l2", borrowerRef: "b", principalAmount: "100.00", stablecoin: "USDC", chain: "POLYGON_AMOY", totalDue: "103.00", ...loan },
      });
    const partly = describeEvent(envelope({ amountPaid: "40.00", amountDue: "63.00" })).body.split("\n");
    expect(partly).toContain("Total due: 103.00 USDC.");
    expect(partly).toContain("Paid so far: 40.00 USDC; amount due now: 63.00 USDC.");
    for (const loan of [
      { amountPaid: "0.00", amountDue: "103.00" },
      { amountPaid: "103.00", amountDue: "0.00" },
    ]) {
      expect(describeEvent(envelope(loan)).body).not.toContain("Paid so far");
    }
    // Repaid: it says so and how much, not "Total due" as if something were owed.
    const repaid = describeEvent(envelope({ amountPaid: "103.00", amountDue: "0.00" })).body.split("\n");
    expect(repaid).toContain("Paid in full: 103.00 USDC.");
    expect(repaid.some((l) => l.startsWith("Total due"))).toBe(false);
    expect(repaid.some((l) => l.startsWith("Paid over"))).toBe(false);
    // Paid over the total: the surplus the borrower is owed back is named.
    const over = describeEvent(envelope({ amountPaid: "103.00", amountDue: "0.00", surplus: "17.00" })).body.split("\n");
    expect(over).toContain("Paid over the total: 17.00 USDC, owed back to the borrower (GET /v1/settlements/l2).");
  });

  test("a failed repayment's text names the amount it tried to pay and its transaction", () => {
    const envelope = envelopeOf("loan.repayment_failed", {
      loan: {
        id: "l3",
        borrowerRef: "b",
        principalAmount: "100.00",
        stablecoin: "USDC",
        chain: "POLYGON_AMOY",
        totalDue: "102.00",
        amountPaid: "40.00",
        amountDue: "62.00",
      },
      payment: { chain: "POLYGON_AMOY", txHash: "0xabc", logIndex: 0, blockNumber: 7, from: "0x1", amount: "500.00" },
    });
    const lines = describeEvent(envelope).body.split("\n");
    expect(lines).toContain("Failed payment: 500.00 USDC, transaction 0xabc.");
    expect(lines).toContain("Paid so far: 40.00 USDC; amount due now: 62.00 USDC.");
  });
});
