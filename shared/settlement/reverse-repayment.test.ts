import { afterAll, beforeAll, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { settlements } from "../../db/schema/loan-records.ts";
import { createTestApp, type TestApp } from "../testing/harness.ts";
import { apiKey, createdLoan, sandboxTenant } from "../testing/loan-fixtures.ts";
import { repayInSandbox } from "../testing/sandbox-repayment.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

test("loan.repayment_reversed names the reversed amount as a decimal string in stablecoin units, as every amount in JSON (it read 102000000 for 102.00)", async () => {
  const m = await sandboxTenant(t);
  const account = privateKeyToAccount(generatePrivateKey());
  const loan = await createdLoan(t, m.key, { borrowerWalletAddress: account.address });
  expect(loan.totalDue).toBe("102.00");
  await repayInSandbox(t, m.key, account, loan.id);
  const [row] = await t.db
    .select()
    .from(settlements)
    .where(and(eq(settlements.loanId, loan.id), eq(settlements.kind, "REPAYMENT")));
  expect(row!.amount).toBe(102_000_000n);
  // The loan's writer un-credits the payment, as the EVM listener asks it to after a reorg orphans its block.
  await t.deps.writer.run({
    kind: "repaymentReversed",
    tenantId: m.tenantId,
    loanId: loan.id,
    payment: { chain: row!.chain, txHash: row!.txHash!, logIndex: row!.logIndex!, blockNumber: row!.blockNumber! },
  });
  expect((await t.request("GET", `/v1/loans/${loan.id}`, { headers: apiKey(m.key) })).body).toMatchObject({
    status: "ACTIVE",
    amountPaid: "0.00",
    amountDue: "102.00",
  });
  const events = (await t.request("GET", `/v1/events?loanId=${loan.id}&type=loan.repayment_reversed`, { headers: apiKey(m.key) })).body.data;
  expect(events).toHaveLength(1);
  expect(events[0].data.reversed).toMatchObject({ chain: row!.chain, txHash: row!.txHash, amount: "102.00" });
});
