import { afterAll, beforeAll, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { borrowers } from "../../db/schema/borrowers.ts";
import { events } from "../../db/schema/events.ts";
import { liquidityPools } from "../../db/schema/liquidity-pools.ts";
import { settlements } from "../../db/schema/loan-records.ts";
import { loans } from "../../db/schema/loans.ts";
import { createTestApp, type TestApp } from "../testing/harness.ts";
import { apiKey, createLoan, sandboxTenant } from "../testing/loan-fixtures.ts";
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

test("a KYC failure landing between processing's reads and its decision's commit: the reservation made with the decision does not hold, and funding holds the loan on fresh reads (it sent the principal to a FAILED borrower)", async () => {
  const owner = await sandboxTenant(t);
  await t.db.update(liquidityPools).set({ available: 0n }).where(eq(liquidityPools.tenantId, owner.tenantId));
  const created = await createLoan(t, owner.key, { principalAmount: "100.00" });
  expect(created.status).toBe(201);
  const ref = created.body.borrowerRef;
  expect((await t.request("PATCH", `/v1/borrowers/${ref}/kyc`, { body: { status: "VERIFIED", merchantUserId: "c" }, headers: apiKey(owner.key) })).status).toBe(
    200,
  );
  const policy = { requireKycVerified: true, manualReviewAbove: null, maxOpenLoansPerBorrower: null, blockedWallets: [] };
  expect((await t.request("PUT", "/v1/policies", { body: policy, headers: apiKey(owner.key) })).status).toBe(200);
  // The loan as a creation whose in-batch decision did not hold leaves it: undecided; and the pool refilled.
  await t.db.update(loans).set({ decisionOutcome: null, decisionReasons: null, decidedAt: null, fundingState: "NONE" }).where(eq(loans.id, created.body.id));
  await t.db.update(liquidityPools).set({ available: 10_000_000_000n }).where(eq(liquidityPools.tenantId, owner.tenantId));
  const [row] = await t.db.select().from(loans).where(eq(loans.id, created.body.id));

  // The borrower's KYC fails (PATCH /kyc, another writer) right after processing read it (its first batch).
  let flipped = false;
  const db = new Proxy(t.db, {
    get(target, prop, receiver) {
      if (prop === "batch") {
        return async (items: never) => {
          const out = await target.batch(items);
          if (!flipped) {
            flipped = true;
            await target.update(borrowers).set({ kycStatus: "FAILED" }).where(eq(borrowers.id, row!.borrowerId));
          }
          return out;
        };
      }
      const v = Reflect.get(target, prop, receiver);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  const after = await processLoan({ db: db as typeof t.db, chain: t.deps.chain, clock: t.clock }, { tenantId: owner.tenantId, loanId: created.body.id });
  expect(flipped).toBe(true);
  expect(after).toMatchObject({ status: "CREATED", decisionOutcome: "APPROVED", fundingState: "HELD" });
  const [pool] = await t.db.select().from(liquidityPools).where(eq(liquidityPools.tenantId, owner.tenantId));
  expect(pool!.reserved).toBe(0n);
});
