import { afterAll, beforeAll, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { events } from "../../db/schema/events.ts";
import { liquidityPools } from "../../db/schema/liquidity-pools.ts";
import { settlements } from "../../db/schema/loan-records.ts";
import { createTestApp, type TestApp } from "../testing/harness.ts";
import { createLoan, sandboxTenant } from "../testing/loan-fixtures.ts";
import { DomainError } from "../domain/errors.ts";
import { processLoan } from "./process-loan.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/**
 * Without the single writer (the Durable Object), concurrent processing of
 * one loan still funds it once: every step is conditional on the loan's
 * write token, and the chain send is keyed by the loan.
 */
test("20 concurrent fundings of one loan, bypassing its writer: funded once, pool moved once", async () => {
  const owner = await sandboxTenant(t);
  await t.db.update(liquidityPools).set({ available: 0n }).where(eq(liquidityPools.tenantId, owner.tenantId));
  const created = await createLoan(t, owner.key, { principalAmount: "300.00" });
  expect(created.body.fundingState).toBe("AWAITING_LIQUIDITY");
  await t.db.update(liquidityPools).set({ available: 10_000_000_000n }).where(eq(liquidityPools.tenantId, owner.tenantId));

  const deps = { db: t.db, chain: t.deps.chain, clock: t.clock };
  const results = await Promise.allSettled(Array.from({ length: 20 }, () => processLoan(deps, { tenantId: owner.tenantId, loanId: created.body.id })));
  for (const r of results) {
    if (r.status === "rejected") expect(r.reason instanceof DomainError && r.reason.kind === "CONFLICT").toBe(true);
  }
  expect(results.some((r) => r.status === "fulfilled" && r.value.status === "ACTIVE")).toBe(true);

  const loanId = created.body.id;
  expect(await t.db.select().from(settlements).where(eq(settlements.loanId, loanId))).toHaveLength(1);
  // One transfer on the simulated chain: the borrower holds exactly the principal.
  const borrower = created.body.borrowerWalletAddress;
  expect(await t.simChains.chain("POLYGON_AMOY", owner.tenantId).balanceOf(borrower)).toBe(300_000_000n);
  const funded = await t.db
    .select()
    .from(events)
    .where(and(eq(events.loanId, loanId), eq(events.type, "loan.funded")));
  expect(funded).toHaveLength(1);
  const [pool] = await t.db.select().from(liquidityPools).where(eq(liquidityPools.tenantId, owner.tenantId));
  expect(pool!.available).toBe(10_000_000_000n - 300_000_000n);
  expect(pool!.reserved).toBe(0n);
});
