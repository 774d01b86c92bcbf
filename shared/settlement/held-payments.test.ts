import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Db } from "../../db/create-db.ts";
import { createTestDb } from "../../db/test-db.ts";
import type { Observation } from "./classify-transaction.ts";
import { applyOrHold, dueHeldPayments, heldBackoffMs, holdPayment, listHeldPayments, releaseHeld } from "./held-payments.ts";

let db: Db;
let close: () => void;
beforeAll(async () => ({ db, close } = await createTestDb()));
afterAll(() => close());

const payment = (txHash: string, amount = 2n ** 60n): Observation => ({
  kind: "payment",
  chain: "TON",
  txHash,
  logIndex: 0,
  blockNumber: 7,
  timestamp: 1_800_000_000,
  from: "0:aa",
  to: "0:bb",
  token: "0:cc",
  amount,
  loanId: "0192f6c4-0000-7000-8000-000000000001",
  comment: "svc:repay:0192f6c4-0000-7000-8000-000000000001",
  sandboxTenantId: null,
});

describe("held payments", () => {
  test("one transaction held for two tenants (one address can be both tenants' COLLECTIONS wallet on TON) is two rows: each tenant tries and releases its own (it was one row, the second tenant's never tried)", async () => {
    const now = new Date("2026-11-24T12:00:00Z");
    const obs = payment("ab".repeat(32));
    await holdPayment(db, { chain: "TON", tenantId: "tenant-a" }, { obs, blockHash: null }, "A's writer failed", now);
    await holdPayment(db, { chain: "TON", tenantId: "tenant-b" }, { obs, blockHash: null }, "B's writer failed", now);
    const due = new Date(now.getTime() + heldBackoffMs(1));
    expect(await dueHeldPayments(db, { chain: "TON", tenantId: "tenant-b" }, due)).toEqual([{ obs, blockHash: null }]);
    expect(await dueHeldPayments(db, { chain: "TON", tenantId: "tenant-a" }, due)).toEqual([{ obs, blockHash: null }]);
    // Not due before its back-off; another tenant, or the EVM scope, sees none of them.
    expect(await dueHeldPayments(db, { chain: "TON", tenantId: "tenant-b" }, now)).toEqual([]);
    expect(await dueHeldPayments(db, { chain: "TON", tenantId: "tenant-c" }, due)).toEqual([]);
    expect(await dueHeldPayments(db, { chain: "TON", tenantId: null }, due)).toEqual([]);
    await releaseHeld(db, { chain: "TON", tenantId: "tenant-a" }, obs);
    expect(await dueHeldPayments(db, { chain: "TON", tenantId: "tenant-a" }, due)).toEqual([]);
    expect(await dueHeldPayments(db, { chain: "TON", tenantId: "tenant-b" }, due)).toEqual([{ obs, blockHash: null }]);
    expect((await listHeldPayments(db, 10)).map((r) => [r.tenantId, r.amount, r.lastError])).toEqual([["tenant-b", 2n ** 60n, "B's writer failed"]]);
    await releaseHeld(db, { chain: "TON", tenantId: "tenant-b" }, obs);
  });

  test("each failed attempt doubles the wait, up to an hour, never given up; the row keeps what was last read", async () => {
    let now = new Date("2026-11-24T12:00:00Z");
    const scope = { chain: "POLYGON" as const, tenantId: null };
    const obs = { ...payment("cd".repeat(32), 5_000_000n), chain: "POLYGON" as const };
    for (let attempt = 1; attempt <= 9; attempt++) {
      const read = { obs: { ...obs, blockNumber: 100 + attempt }, blockHash: `0x${String(attempt).repeat(64)}` };
      expect(await holdPayment(db, scope, read, `attempt ${attempt}`, now)).toBe(attempt);
      const [row] = await listHeldPayments(db, 10);
      expect(row).toMatchObject({ attempts: attempt, lastError: `attempt ${attempt}`, blockNumber: 100 + attempt, tenantId: null });
      expect(row!.nextAttemptAt.getTime() - now.getTime()).toBe(Math.min(60_000 * 2 ** (attempt - 1), 3_600_000));
      expect(await dueHeldPayments(db, scope, row!.nextAttemptAt)).toEqual([read]);
      now = row!.nextAttemptAt;
    }
    await releaseHeld(db, scope, obs);
    expect(await listHeldPayments(db, 10)).toEqual([]);
  });

  test("a payment to a loan made after one that is held waits behind it (applied first, it was judged as if the earlier one had not been made: late fees, loan.overdue); earlier ones, other loans' and other scopes' apply", async () => {
    const now = new Date("2026-11-24T12:00:00Z");
    const scope = { chain: "POLYGON" as const, tenantId: null };
    const at = (txHash: string, blockNumber: number, logIndex = 0, loanId = payment("x").loanId) => ({
      obs: { ...payment(txHash, 1_000_000n), chain: "POLYGON" as const, blockNumber, logIndex, loanId },
      blockHash: null,
    });
    const applied: string[] = [];
    const run = async (held: ReturnType<typeof at>, retry = false) => {
      const report = {};
      await applyOrHold(db, scope, held, async () => void applied.push(held.obs.txHash), report, { now: () => now, retry });
      return report;
    };
    const first = at("0xa1", 7, 3);
    await holdPayment(db, scope, first, "the loan's writer failed", now);
    // Later in the same block, a later block: held behind it, not applied.
    expect(await run(at("0xb1", 7, 4))).toEqual({ held: 1, heldError: expect.stringContaining("waits for the payment 0xa1") });
    expect(await run(at("0xb2", 8))).toMatchObject({ held: 1 });
    // Made before it, another loan's, the same loan on TON (another scope): applied.
    await run(at("0xc1", 7, 2));
    await run(at("0xc2", 9, 0, "0192f6c4-0000-7000-8000-000000000002"));
    await applyOrHold(
      db,
      { chain: "TON", tenantId: "t" },
      { ...at("0xc3", 9), obs: { ...at("0xc3", 9).obs, chain: "TON" } },
      async () => void applied.push("0xc3"),
      {},
      { now: () => now },
    );
    expect(applied).toEqual(["0xc1", "0xc2", "0xc3"]);
    expect((await listHeldPayments(db, 10)).map((r) => r.txHash).sort()).toEqual(["0xa1", "0xb1", "0xb2"]);
    // The first applies at last: the ones behind it follow, in order.
    expect(await run(first, true)).toEqual({ heldApplied: 1 });
    expect(await run(at("0xb1", 7, 4), true)).toEqual({ heldApplied: 1 });
    expect(await run(at("0xb2", 8), true)).toEqual({ heldApplied: 1 });
    expect(applied).toEqual(["0xc1", "0xc2", "0xc3", "0xa1", "0xb1", "0xb2"]);
    expect(await listHeldPayments(db, 10)).toEqual([]);
  });
});
