import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { events } from "../../db/schema/events.ts";
import type { LoanRow } from "../../db/schema/loans.ts";
import { loanCarries } from "../loans/loan-guard.ts";
import { createTestApp, type TestApp } from "../testing/harness.ts";
import { verbCreatedLoan } from "../testing/loan-fixtures.ts";
import { eventInsertIf, loanEnvelope, loanEventInsert } from "./loan-events.ts";
import { builtQuery, preparedQuery } from "../../db/statement-text.ts";

let t: TestApp;
let loan: LoanRow;
beforeAll(async () => {
  t = await createTestApp();
  loan = await verbCreatedLoan(t, { borrowerRef: "events", principalAmount: "123.45" });
});
afterAll(() => t.close());

test("a loan's event, prepared once: the same SQL and bound values as eventInsertIf on the loan's token", () => {
  const token = crypto.randomUUID();
  for (let i = 0; i < 2; i++) {
    const envelope = loanEnvelope("loan.funded", loan, t.clock.now(), { reason: `x${i}` });
    expect(preparedQuery(loanEventInsert(t.db, envelope, loan.id, token))).toEqual(
      builtQuery(eventInsertIf(t.db, envelope, loan.id, loanCarries(loan.id, token))),
    );
  }
});

test("a loan's event is written only while the loan carries the token, as it was made", async () => {
  const envelope = loanEnvelope("loan.funded", loan, t.clock.now());
  await t.db.batch([loanEventInsert(t.db, envelope, loan.id, "not-the-token")]);
  expect(await t.db.select().from(events).where(eq(events.id, envelope.id))).toHaveLength(0);
  await t.db.batch([loanEventInsert(t.db, envelope, loan.id, loan.writeToken)]);
  const [event] = await t.db.select().from(events).where(eq(events.id, envelope.id));
  expect(event!.envelope).toEqual(envelope);
  expect([event!.loanId, event!.tenantId, event!.type, event!.mode, event!.relayedAt]).toEqual([loan.id, loan.tenantId, "loan.funded", "sandbox", null]);
  expect(event!.createdAt).toEqual(new Date(envelope.createdAt));
});
