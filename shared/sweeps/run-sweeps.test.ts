import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { loans } from "../../db/schema/loans.ts";
import type { LoanCommand } from "../loans/loan-commands.ts";
import { createTestApp, type TestApp } from "../testing/harness.ts";
import { copyLoans } from "../testing/loan-copies.ts";
import { apiKey, createdLoan, sandboxTenant } from "../testing/loan-fixtures.ts";
import { DAY_MS } from "../domain/pricing.ts";
import { fundingRetryPage, retryFunding, sweepDueLoans } from "./run-sweeps.ts";
import { SWEEP_PAGE, SWEEP_RETRY_AFTER_MS } from "./sweep-loans.ts";

describe("the funding retry's report", () => {
  test("names the loans that failed and why (an audit saw only `failed: 1` on every tick, hiding a stuck loan)", async () => {
    const t = await createTestApp();
    try {
      const m = await sandboxTenant(t);
      const loan = await createdLoan(t, m.key);
      // Waiting to be funded again.
      await t.db.update(loans).set({ status: "CREATED", fundingState: "AWAITING_LIQUIDITY" }).where(eq(loans.id, loan.id));
      const failing = { run: async () => Promise.reject(new TypeError("the pool row is gone")) };
      const report = await retryFunding({ db: t.db, writer: failing as never, clock: t.clock }, { tenantId: m.tenantId });
      expect(report).toEqual({ visited: 1, failed: 1, errors: [{ loanId: loan.id, error: "TypeError: the pool row is gone" }] });
      const working = { run: async () => undefined };
      expect(await retryFunding({ db: t.db, writer: working as never, clock: t.clock }, { tenantId: m.tenantId })).toEqual({ visited: 1, failed: 0 });
    } finally {
      t.close();
    }
  });
});

/** The id of copy `i` of a loan (see copiesWaiting): still a UUID, which processing requires. */
const copyId = (loanId: string, i: number) => `${loanId.slice(0, 24)}${String(i).padStart(12, "0")}`;

/** `n` copies of `loanId` (new ids and keys), waiting for liquidity, created just after it in order. */
const copiesWaiting = (t: TestApp, loanId: string, n: number) =>
  copyLoans(t, {
    where: "l.id = ?",
    args: [loanId],
    copies: n,
    set: {
      id: "substr(l.id, 1, 24) || printf('%012d', n.i)",
      idempotency_key: "l.idempotency_key || '-' || n.i",
      write_token: "l.write_token || '-' || n.i",
      created_at: "l.created_at + n.i",
      status: "'CREATED'",
      funding_state: "'AWAITING_LIQUIDITY'",
    },
  });

/** A writer that records which loans it was asked to process, in order. */
function recordingWriter() {
  const seen: string[] = [];
  return { seen, writer: { run: async (cmd: LoanCommand) => void seen.push(cmd.loanId) } as never };
}

describe("the funding retry takes every waiting loan in turn (anyone's 100 sandbox loans left unfundable stopped every other tenant's retries)", () => {
  test("an attacker's 150 sandbox loans waiting for good neither hide a live loan in flight nor, over two runs of one page, another tenant's sandbox loan", async () => {
    const t = await createTestApp();
    try {
      const attacker = await sandboxTenant(t, "Hoarder Ltd");
      // The attacker's pool at 0: every loan waits for liquidity, for good.
      expect((await t.request("PUT", "/v1/sandbox/liquidity", { headers: apiKey(attacker.key), body: { available: "0.00" } })).status).toBe(200);
      const first = await createdLoan(t, attacker.key);
      expect(first).toMatchObject({ fundingState: "AWAITING_LIQUIDITY" });
      await copiesWaiting(t, first.id, 149);
      // Newer than all of them: another tenant's live loan whose transfer is in flight, and its sandbox loan waiting.
      const newer = new Date(Date.parse(first.createdAt) + 10_000);
      const victim = await sandboxTenant(t, "Victim Ltd");
      const live = await createdLoan(t, victim.key);
      await t.db.update(loans).set({ status: "CREATED", mode: "live", fundingState: "RESERVED", createdAt: newer }).where(eq(loans.id, live.id));
      const waiting = await createdLoan(t, victim.key);
      await t.db.update(loans).set({ status: "CREATED", fundingState: "AWAITING_LIQUIDITY", createdAt: newer }).where(eq(loans.id, waiting.id));

      const run1 = recordingWriter();
      expect(await retryFunding({ db: t.db, writer: run1.writer, clock: t.clock }, { maxPages: 2 })).toEqual({ visited: 101, failed: 0, more: true });
      // Live loans come first; then the 100 sandbox loans never retried, oldest first.
      expect(run1.seen[0]).toBe(live.id);
      expect(run1.seen.slice(1)).toEqual([first.id, ...Array.from({ length: 99 }, (_, i) => copyId(first.id, i + 1))]);
      // The clock has not moved (the run's mark goes one past the last): the next run takes the live loan again, then
      // the 51 sandbox loans never retried (the victim's among them) before the least recently retried.
      const run2 = recordingWriter();
      expect(await retryFunding({ db: t.db, writer: run2.writer, clock: t.clock }, { maxPages: 2 })).toEqual({ visited: 101, failed: 0, more: true });
      expect(run2.seen[0]).toBe(live.id);
      expect(run2.seen).toContain(waiting.id);
      expect(new Set([...run1.seen, ...run2.seen]).size).toBe(152);
      expect(run2.seen).toContain(first.id);
      expect(run2.seen).not.toContain(copyId(first.id, 99));

      // With the default page cap one run reaches every waiting loan, and the victim's is funded once liquidity is there.
      await t.db.update(loans).set({ mode: "sandbox", fundingState: "AWAITING_LIQUIDITY" }).where(eq(loans.id, live.id));
      const report = await retryFunding({ db: t.db, writer: t.deps.writer, clock: t.clock });
      expect(report).toMatchObject({ visited: 152, failed: 0 });
      expect((await t.request("GET", `/v1/loans/${waiting.id}`, { headers: apiKey(victim.key) })).body).toMatchObject({ status: "ACTIVE" });
      expect((await t.request("GET", `/v1/loans/${first.id}`, { headers: apiKey(attacker.key) })).body).toMatchObject({ status: "CREATED" });
    } finally {
      t.close();
    }
  });

  test("the page is read through the partial index of waiting loans, in its order (no scan of loans, no sort)", async () => {
    const t = await createTestApp();
    try {
      for (const q of [
        fundingRetryPage(t.db, { mode: "sandbox", mark: Date.now(), limit: 100 }),
        fundingRetryPage(t.db, { mode: "live", mark: Date.now(), tenantId: "00000000-0000-4000-8000-000000000001", limit: 100 }),
      ]) {
        const { sql: text, params } = q.toSQL();
        const plan = (await t.client.execute({ sql: `EXPLAIN QUERY PLAN ${text}`, args: params as never[] })).rows.map((r) => String(r.detail)).join("\n");
        expect(plan).toContain("loans_funding_retry_idx");
        expect(plan).not.toContain("USE TEMP B-TREE");
      }
    } finally {
      t.close();
    }
  });
});

describe("the overdue/default sweep leaves a loan whose sweep throws out of its pages for a while (100 of them stopped every other loan's sweep)", () => {
  test("120 loans whose sweep always throws, due first: another tenant's loan is still marked overdue in the first run; they are tried again after SWEEP_RETRY_AFTER_MS", async () => {
    const t = await createTestApp();
    try {
      const attacker = await sandboxTenant(t, "Poison Ltd");
      const victim = await sandboxTenant(t, "Victim Ltd");
      const seed = await createdLoan(t, attacker.key);
      expect(seed.status).toBe("ACTIVE");
      await copyLoans(t, {
        where: "l.id = ?",
        args: [seed.id],
        copies: SWEEP_PAGE + 20,
        set: {
          id: "substr(l.id, 1, 24) || printf('%012d', n.i)",
          idempotency_key: "l.idempotency_key || '-' || n.i",
          write_token: "l.write_token || '-' || n.i",
        },
      });
      const poison = new Set((await t.db.select({ id: loans.id }).from(loans).where(eq(loans.tenantId, attacker.tenantId))).map((r) => r.id));
      const honest = await createdLoan(t, victim.key);
      // Due an hour later than every poisoned loan, so it sorts after them.
      await t.db
        .update(loans)
        .set({ dueAt: new Date(Date.parse(seed.dueAt) + 3_600_000) })
        .where(eq(loans.id, honest.id));
      t.clock.advance(3 * DAY_MS + 2 * 3_600_000);

      const tried: string[] = [];
      const writer = {
        run: async (cmd: LoanCommand) => {
          tried.push(cmd.loanId);
          if (poison.has(cmd.loanId)) throw new RangeError("poison");
          return t.deps.writer.run(cmd);
        },
      };
      const report = await sweepDueLoans({ db: t.db, writer: writer as never, clock: t.clock }, { maxPages: 5 });
      expect(report).toMatchObject({ visited: poison.size + 1, failed: poison.size });
      expect(report.errors?.[0]).toEqual({ loanId: expect.any(String), error: "RangeError: poison" });
      const [row] = await t.db.select({ overdueAt: loans.overdueAt }).from(loans).where(eq(loans.id, honest.id));
      expect(row!.overdueAt).not.toBeNull();

      // Left out of the cron's sweep meanwhile; tried again once SWEEP_RETRY_AFTER_MS has passed.
      tried.length = 0;
      expect(await sweepDueLoans({ db: t.db, writer: writer as never, clock: t.clock })).toEqual({ visited: 0, failed: 0 });
      // One tenant's sweep (a sandbox clock advance) tries them at once, each once per run: it has run when the call returns.
      t.clock.advance(1);
      expect(await sweepDueLoans({ db: t.db, writer: writer as never, clock: t.clock }, { tenantId: attacker.tenantId })).toMatchObject({
        visited: poison.size,
        failed: poison.size,
      });
      t.clock.advance(SWEEP_RETRY_AFTER_MS + 1);
      expect((await sweepDueLoans({ db: t.db, writer: writer as never, clock: t.clock })).failed).toBe(poison.size);
    } finally {
      t.close();
    }
  });
});
