import { afterAll, beforeAll, expect, test } from "bun:test";
import { countRoundTrips } from "../testing/count-round-trips.ts";
import { and, asc, eq } from "drizzle-orm";
import { liquidityPools } from "../../db/schema/liquidity-pools.ts";
import { settlements } from "../../db/schema/loan-records.ts";
import { putPolicy } from "../underwriting/policies.ts";
import { borrowers } from "../../db/schema/borrowers.ts";
import { events } from "../../db/schema/events.ts";
import { loans } from "../../db/schema/loans.ts";
import { createTestApp, type TestApp } from "../testing/harness.ts";
import { loanCreation, sandboxTenant } from "../testing/loan-fixtures.ts";
import { DomainError } from "../domain/errors.ts";
import { formatAmount } from "../domain/money.ts";
import { createLoan } from "./create-loan.ts";
import { processLoan } from "./process-loan.ts";
import { loanFacts } from "./processing-reads.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const roundTrips = <T>(fn: () => Promise<T>) => countRoundTrips(t.client, fn);

const input = (m: Awaited<ReturnType<typeof sandboxTenant>>, overrides: Record<string, unknown> = {}) => loanCreation(t, m, overrides);

test("a loan is created in two round trips, for a new borrower and a known one", async () => {
  const m = await sandboxTenant(t);
  const first = input(m);
  const created = await roundTrips(() => createLoan({ db: t.db }, first));
  expect(created.result.created).toBe(true);
  expect(created.trips).toBe(2);
  const again = await roundTrips(() => createLoan({ db: t.db }, input(m, { borrowerRef: first.borrowerRef })));
  expect(again.result.created).toBe(true);
  expect(again.trips).toBe(2);
  // One borrower for the ref, and both loans are its.
  const rows = await t.db
    .select()
    .from(borrowers)
    .where(and(eq(borrowers.tenantId, m.tenantId), eq(borrowers.borrowerRef, first.borrowerRef)));
  expect(rows).toHaveLength(1);
  expect(created.result.loan.borrowerId).toBe(rows[0]!.id);
  expect(again.result.loan.borrowerId).toBe(rows[0]!.id);
});

test("10 concurrent loans of one new borrower (different keys): one borrower row, every loan its, one event each", async () => {
  const m = await sandboxTenant(t);
  const borrowerRef = `borrower-${crypto.randomUUID()}`;
  const inputs = Array.from({ length: 10 }, () => input(m, { borrowerRef }));
  const results = await Promise.all(inputs.map((i) => createLoan({ db: t.db }, i)));
  expect(results.every((r) => r.created)).toBe(true);
  const rows = await t.db
    .select()
    .from(borrowers)
    .where(and(eq(borrowers.tenantId, m.tenantId), eq(borrowers.borrowerRef, borrowerRef)));
  expect(rows).toHaveLength(1);
  for (const r of results) expect(r.loan.borrowerId).toBe(rows[0]!.id);
  const stored = await t.db.select().from(loans).where(eq(loans.borrowerId, rows[0]!.id));
  expect(stored).toHaveLength(10);
  for (const loan of stored) {
    const submitted = await t.db
      .select()
      .from(events)
      .where(and(eq(events.loanId, loan.id), eq(events.type, "loan.application_submitted")));
    expect(submitted).toHaveLength(1);
    // The event's loan names the borrower the row has.
    expect((submitted[0]!.envelope.data as { loan: { borrowerId: string } }).loan.borrowerId).toBe(rows[0]!.id);
  }
});

test("a repeated key answers the first loan as it is now, even with a body that would be refused", async () => {
  const m = await sandboxTenant(t);
  const first = input(m);
  const created = await createLoan({ db: t.db }, first);
  const repeated = await createLoan({ db: t.db }, { ...first, loanProductId: "not-a-product", principalAmount: "-1" });
  expect(repeated.created).toBe(false);
  expect(repeated.loan.id).toBe(created.loan.id);
  expect(repeated.loan.writeToken).toBe(created.loan.writeToken);
});

test("creation decides the loan and reserves its principal in the insert's batch: events in order, pool reserved to the unit", async () => {
  const m = await sandboxTenant(t);
  const [poolBefore] = await t.db.select().from(liquidityPools).where(eq(liquidityPools.tenantId, m.tenantId));
  const { loan, created } = await createLoan({ db: t.db }, input(m, { principalAmount: "123.45" }));
  expect(created).toBe(true);
  expect([loan.status, loan.decisionOutcome, loan.fundingState, loan.poolId]).toEqual(["CREATED", "APPROVED", "RESERVED", poolBefore!.id]);
  expect(loan.policyVersion).toBe(1);
  const [stored] = await t.db.select().from(loans).where(eq(loans.id, loan.id));
  expect(stored).toEqual(loan);
  const [poolAfter] = await t.db.select().from(liquidityPools).where(eq(liquidityPools.id, poolBefore!.id));
  expect(poolAfter!.reserved - poolBefore!.reserved).toBe(123_450_000n);
  expect(poolAfter!.available).toBe(poolBefore!.available);
  const recorded = await t.db.select().from(events).where(eq(events.loanId, loan.id)).orderBy(asc(events.seq));
  expect(recorded.map((e) => e.type)).toEqual(["loan.application_submitted", "loan.decision"]);
  const decided = recorded[1]!.envelope.data as { loan: { status: string; decision: { outcome: string } } };
  expect(decided.loan.decision.outcome).toBe("APPROVED");
  // Decided after it was submitted, even on a clock that stands still: the events sort by createdAt in the order they were made.
  expect(loan.decidedAt!.getTime()).toBe(loan.createdAt.getTime() + 1);
  expect(Date.parse(recorded[1]!.envelope.createdAt)).toBeGreaterThan(Date.parse(recorded[0]!.envelope.createdAt));
});

test("processing a created loan: with the created row, only the funding; with its facts, one round trip of reads before it", async () => {
  const m = await sandboxTenant(t);
  const deps = { db: t.db, chain: t.deps.chain, clock: t.clock };
  const { loan } = await createLoan({ db: t.db }, input(m));
  const processed = await roundTrips(() =>
    processLoan(deps, { tenantId: m.tenantId, loanId: loan.id, facts: loanFacts(loan), created: { loan, clockOffsetMs: 0 } }),
  );
  expect([processed.result.status, processed.result.fundingState]).toEqual(["ACTIVE", "FUNDED"]);
  // (The Bun tier's simulated chain keeps its ledger in memory: no round trip of its own.)
  expect(processed.trips).toBe(1);
  // Without the created row: one batch of reads first.
  const other = await createLoan({ db: t.db }, input(m));
  const read = await roundTrips(() => processLoan(deps, { tenantId: m.tenantId, loanId: other.loan.id, facts: loanFacts(other.loan) }));
  expect(read.result.status).toBe("ACTIVE");
  expect(read.trips).toBe(2);
  // Without the facts it reads the loan first: one round trip more (and nothing left to do).
  const again = await roundTrips(() => processLoan(deps, { tenantId: m.tenantId, loanId: loan.id }));
  expect(again.result.writeToken).toBe(processed.result.writeToken);
  expect(again.trips).toBe(2);
});

test("a created row that is no longer the loan's state: the funding commit fails, processing goes on from fresh reads, funded once", async () => {
  const m = await sandboxTenant(t);
  const deps = { db: t.db, chain: t.deps.chain, clock: t.clock };
  const { loan } = await createLoan({ db: t.db }, input(m));
  // Another command of the loan funded it first.
  const first = await processLoan(deps, { tenantId: m.tenantId, loanId: loan.id });
  expect(first.status).toBe("ACTIVE");
  const stale = await processLoan(deps, { tenantId: m.tenantId, loanId: loan.id, created: { loan, clockOffsetMs: 0 } });
  expect(stale.writeToken).toBe(first.writeToken);
  const funded = await t.db
    .select()
    .from(events)
    .where(and(eq(events.loanId, loan.id), eq(events.type, "loan.funded")));
  expect(funded).toHaveLength(1);
  const fundings = await t.db.select().from(settlements).where(eq(settlements.loanId, loan.id));
  expect(fundings.map((s) => [s.kind, s.status])).toEqual([["FUNDING", "CONFIRMED"]]);
});

test("a loan of the same borrower committed between creation's reads and its batch: no decision at creation, processing declines over the limit", async () => {
  for (const known of [false, true]) {
    const m = await sandboxTenant(t);
    const borrowerRef = `borrower-${crypto.randomUUID()}`;
    // A known borrower has one open loan already; the limit leaves room for one more.
    if (known) await createLoan({ db: t.db }, input(m, { borrowerRef }));
    const limit = known ? 2 : 1;
    await putPolicy(
      { db: t.db },
      {
        tenantId: m.tenantId,
        policy: { requireKycVerified: false, manualReviewAbove: null, maxOpenLoansPerBorrower: limit, blockedWallets: [] },
        actor: "test",
        now: t.clock.now(),
      },
    );
    // The rival commits right after the first loan's reads, before its write batch.
    const racing = await whileSecondBatchWaits(
      () => createLoan({ db: t.db }, input(m, { borrowerRef })),
      () => createLoan({ db: t.db }, input(m, { borrowerRef })),
    );
    expect(racing.rival.loan.decisionOutcome).toBe("APPROVED");
    const { loan } = racing.result;
    expect(racing.result.created).toBe(true);
    expect([loan.status, loan.decisionOutcome, loan.fundingState]).toEqual(["CREATED", null, "NONE"]);
    const types = (await t.db.select().from(events).where(eq(events.loanId, loan.id))).map((e) => e.type);
    expect(types).toEqual(["loan.application_submitted"]);
    const deps = { db: t.db, chain: t.deps.chain, clock: t.clock };
    const processed = await processLoan(deps, { tenantId: m.tenantId, loanId: loan.id, facts: loanFacts(loan), created: { loan, clockOffsetMs: 0 } });
    expect([processed.status, processed.decisionOutcome, processed.fundingState]).toEqual(["CREATED", "DECLINED", "NONE"]);
  }
});

/**
 * Runs `fn`, and `rival` to completion just before `fn`'s second batch
 * (creation's write, after its batch of reads) reaches the database.
 */
async function whileSecondBatchWaits<T, R>(fn: () => Promise<T>, rival: () => Promise<R>): Promise<{ result: T; rival: R }> {
  const methods = t.client as unknown as Record<"batch", (...args: unknown[]) => Promise<unknown>>;
  const { batch } = methods;
  let calls = 0;
  let rivalResult: R | undefined;
  methods.batch = async (...args) => {
    calls++;
    if (calls === 2) {
      methods.batch = batch;
      rivalResult = await rival();
    }
    return batch.apply(t.client, args);
  };
  try {
    const result = await fn();
    expect(rivalResult).toBeDefined();
    return { result, rival: rivalResult as R };
  } finally {
    methods.batch = batch;
  }
}

test("facts that are not the loan's are refused before anything is written", async () => {
  const m = await sandboxTenant(t);
  const { loan } = await createLoan({ db: t.db }, input(m));
  const deps = { db: t.db, chain: t.deps.chain, clock: t.clock };
  const wrong = { ...loanFacts(loan), borrowerId: crypto.randomUUID() };
  const refused = await processLoan(deps, { tenantId: m.tenantId, loanId: loan.id, facts: wrong }).catch((err: unknown) => err);
  expect(refused instanceof DomainError && refused.kind === "INTERNAL").toBe(true);
  const [stored] = await t.db.select().from(loans).where(eq(loans.id, loan.id));
  expect(stored!.status).toBe("CREATED");
  expect(stored!.writeToken).toBe(loan.writeToken);
});

test("a loan with agreed terms is made only on those terms: a product priced otherwise when creation reads it is 400, and no loan", async () => {
  const m = await sandboxTenant(t);
  const made = await createLoan({ db: t.db }, input(m));
  const terms = { totalDue: "102.00", dailyLateFee: formatAmount(made.loan.dailyLateFee), gracePeriodDays: made.loan.gracePeriodDays };
  expect(made.loan.principal + made.loan.processingFee).toBe(102_000_000n);
  // The same terms: made.
  expect((await createLoan({ db: t.db }, input(m, { agreedTerms: terms }))).created).toBe(true);
  // Terms the product no longer gives (signed on an older price): refused before anything is written.
  for (const signed of [
    { ...terms, totalDue: "101.00" },
    { ...terms, dailyLateFee: "0.01" },
    { ...terms, gracePeriodDays: terms.gracePeriodDays + 1 },
  ]) {
    const other = input(m, { agreedTerms: signed });
    const err = await createLoan({ db: t.db }, other).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).status).toBe(400);
    expect((err as DomainError).message).toStartWith("agreementChallengeId: the merchant's terms changed since the quote (");
    expect(await t.db.select().from(loans).where(eq(loans.idempotencyKey, other.idempotencyKey))).toEqual([]);
  }
});
