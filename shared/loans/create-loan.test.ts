import { afterAll, beforeAll, expect, test } from "bun:test";
import { countRoundTrips } from "../testing/count-round-trips.ts";
import { and, eq } from "drizzle-orm";
import { borrowers } from "../../db/schema/borrowers.ts";
import { events } from "../../db/schema/events.ts";
import { loans } from "../../db/schema/loans.ts";
import { createTestApp, type TestApp } from "../testing/harness.ts";
import { newWallet, sandboxTenant } from "../testing/loan-fixtures.ts";
import { DomainError } from "../domain/errors.ts";
import { createLoan } from "./create-loan.ts";
import { processLoan } from "./process-loan.ts";
import { loanFacts } from "./processing-reads.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const roundTrips = <T>(fn: () => Promise<T>) => countRoundTrips(t.client, fn);

const input = (m: Awaited<ReturnType<typeof sandboxTenant>>, overrides: Record<string, unknown> = {}) => {
  return {
    tenant: { id: m.tenantId, mode: "sandbox" as const, certifiedAt: null },
    loanProductId: m.loanProductId,
    borrowerRef: `borrower-${crypto.randomUUID()}`,
    borrowerWalletAddress: newWallet(),
    chain: "POLYGON_AMOY" as const,
    principalAmount: "100.00",
    idempotencyKey: `key-${crypto.randomUUID()}`,
    keyMode: "sandbox" as const,
    now: t.clock.now(),
    ...overrides,
  };
};

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

test("processing a new loan with its creator's facts: one round trip of reads, the decision with its reservation, the funding", async () => {
  const m = await sandboxTenant(t);
  const { loan } = await createLoan({ db: t.db }, input(m));
  const deps = { db: t.db, chain: t.deps.chain, clock: t.clock };
  const processed = await roundTrips(() => processLoan(deps, { tenantId: m.tenantId, loanId: loan.id, facts: loanFacts(loan) }));
  expect(processed.result.status).toBe("ACTIVE");
  expect(processed.result.fundingState).toBe("FUNDED");
  expect(processed.trips).toBe(3);
  // Without the facts it reads the loan first: one round trip more (and nothing left to do).
  const again = await roundTrips(() => processLoan(deps, { tenantId: m.tenantId, loanId: loan.id }));
  expect(again.result.writeToken).toBe(processed.result.writeToken);
  expect(again.trips).toBe(2);
});

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
