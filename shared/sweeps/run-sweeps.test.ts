import { describe, expect, test } from "bun:test";
import { createTestApp } from "../testing/harness.ts";
import { retryFunding } from "./run-sweeps.ts";
import { loans } from "../../db/schema/loans.ts";
import { eq } from "drizzle-orm";
import { createdLoan, sandboxTenant } from "../testing/loan-fixtures.ts";

describe("the funding retry's report", () => {
  test("names the loans that failed and why (an audit saw only `failed: 1` on every tick, hiding a stuck loan)", async () => {
    const t = await createTestApp();
    try {
      const m = await sandboxTenant(t);
      const loan = await createdLoan(t, m.key);
      // Waiting to be funded again.
      await t.db.update(loans).set({ status: "CREATED", fundingState: "AWAITING_LIQUIDITY" }).where(eq(loans.id, loan.id));
      const failing = { run: async () => Promise.reject(new TypeError("the pool row is gone")) };
      const report = await retryFunding({ db: t.db, writer: failing as never }, { tenantId: m.tenantId });
      expect(report).toEqual({ visited: 1, failed: 1, errors: [{ loanId: loan.id, error: "TypeError: the pool row is gone" }] });
      const working = { run: async () => undefined };
      expect(await retryFunding({ db: t.db, writer: working as never }, { tenantId: m.tenantId })).toEqual({ visited: 1, failed: 0 });
    } finally {
      t.close();
    }
  });
});
