import { afterAll, beforeAll, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { loans, type LoanRow } from "../../db/schema/loans.ts";
import { createTestApp, type TestApp } from "../testing/harness.ts";
import { verbCreatedLoan } from "../testing/loan-fixtures.ts";
import { commitTransition, planTransition } from "./commit-transition.ts";
import { preparedQuery } from "../../db/statement-text.ts";

let t: TestApp;
let loan: LoanRow;
beforeAll(async () => {
  t = await createTestApp();
  loan = await verbCreatedLoan(t, { borrowerRef: "transitions", principalAmount: "50.00" });
});
afterAll(() => t.close());

test("a guarded update without a condition, prepared per set of columns, binds what drizzle's own update binds", () => {
  const now = t.clock.now();
  for (const reasons of [[{ code: "X", message: "y" }], null]) {
    const plan = planTransition(t.db, {
      loan,
      trigger: { kind: "FUNDING_CONFIRMED" },
      now,
      set: {
        fundingState: "FUNDED",
        fundedAt: now,
        dueAt: new Date(now.getTime() + 86_400_000),
        fundingTxHash: "0xabc",
        decisionReasons: reasons as LoanRow["decisionReasons"],
      },
    });
    const { next } = plan;
    const changed = Object.fromEntries(Object.entries(next).filter(([k, v]) => !["id", "tenantId", "createdAt"].includes(k) && v !== loan[k as keyof LoanRow]));
    const plain = t.db
      .update(loans)
      .set(changed)
      .where(and(eq(loans.id, loan.id), eq(loans.tenantId, loan.tenantId), eq(loans.writeToken, loan.writeToken)))
      .returning({ id: loans.id })
      .toSQL();
    const prepared = preparedQuery(plan.statements[plan.updateAt]!);
    expect(prepared).toEqual(plain);
  }
});

test("it commits only on the token it was read with: a second change from the same row is refused", async () => {
  const now = t.clock.now();
  const change = () =>
    commitTransition(t.db, {
      loan,
      trigger: { kind: "FUNDING_CONFIRMED" },
      now,
      set: { fundingState: "FUNDED", fundedAt: now, dueAt: now, fundingTxHash: "0x1" },
    });
  const funded = await change();
  const [stored] = await t.db.select().from(loans).where(eq(loans.id, loan.id));
  expect(stored).toEqual(funded);
  expect(await change().catch((err: unknown) => (err as Error).message)).toMatch(/changed/);
});
