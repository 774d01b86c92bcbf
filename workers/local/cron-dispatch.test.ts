import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { LISTENER_PAGE } from "../../shared/settlement/listener.ts";
import { RELAY_PAGE } from "../../shared/webhooks/relay-outbox.ts";
import { signUpMerchant, startTestStack, type TestStack } from "./integration.ts";

// Issue 17: the cron's scheduled handler is a dispatcher. A tick with a backlog of more than a page
// (unread sandbox chain transactions, unrelayed events) still sweeps and relays: each job runs in an
// invocation of its own, and a job stopped at its cap goes on in a continuation of its own.

const DAY_MS = 86_400_000;
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ ratelimits: { IP_LIMITER: { limit: 10_000 } } });
});
afterAll(() => stack.dispose());

describe("a cron tick over backlogs larger than a page", () => {
  test("the listener reads past its first page in a continuation; the sweep and the relay run, each in its own invocation", async () => {
    const m = await signUpMerchant(stack, "Backlog");
    const db = await stack.db();
    const one = async <T>(sql: string, ...params: unknown[]) =>
      (await db
        .prepare(sql)
        .bind(...params)
        .first<T>())!;

    // More than one page of transactions on the tenant's sandbox TON ledger.
    const address = `0:${"ab".repeat(32)}`;
    for (let i = 0; i < LISTENER_PAGE + 20; i += 10) {
      const sent = await Promise.all(
        Array.from({ length: 10 }, () => m.api("/v1/sandbox/chain/faucet", { json: { chain: "TON_TESTNET", address, amount: "1.00" } })),
      );
      expect(sent.map((r) => r.status)).toEqual(Array(10).fill(200));
    }
    const head = (
      await one<{ lastBlock: number }>("SELECT last_block AS lastBlock FROM sandbox_ledgers WHERE tenant_id = ? AND chain = 'TON_TESTNET'", m.tenantId)
    ).lastBlock;
    expect(head).toBeGreaterThan(LISTENER_PAGE);

    // A loan that comes due once the tenant's sandbox clock is 10 days ahead.
    const loan = await m.api("/v1/loans", {
      json: {
        loanProductId: m.loanProductId,
        borrowerRef: "backlog",
        borrowerWalletAddress: privateKeyToAccount(generatePrivateKey()).address,
        chain: "POLYGON_AMOY",
        principalAmount: "100.00",
        idempotencyKey: crypto.randomUUID(),
        tenureDays: 3,
      },
    });
    expect(loan.body.status).toBe("ACTIVE");

    // The backlogs, as a process cut off for a while would leave them: the ledger unread from the
    // start, more than a page of unrelayed events, and a sandbox clock moved without its own sweep.
    await db.prepare("UPDATE sandbox_ledgers SET last_block = 0, poll_after = 0 WHERE tenant_id = ?").bind(m.tenantId).run();
    const template = await one<{ id: string }>("SELECT id FROM events WHERE tenant_id = ? ORDER BY seq LIMIT 1", m.tenantId);
    await db
      .prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
         INSERT INTO events (id, seq, tenant_id, type, mode, loan_id, envelope, created_at, relayed_at)
         SELECT lower(hex(randomblob(16))), (SELECT MAX(seq) FROM events) + i, tenant_id, type, mode, loan_id, envelope, created_at, NULL
         FROM events, n WHERE events.id = ?`,
      )
      .bind(RELAY_PAGE * 2 + 10, template.id)
      .run();
    const unrelayed = () => one<{ c: number }>("SELECT COUNT(*) AS c FROM events WHERE tenant_id = ? AND relayed_at IS NULL", m.tenantId);
    expect((await unrelayed()).c).toBe(RELAY_PAGE * 2 + 10);
    await db
      .prepare("UPDATE tenants SET clock_offset_ms = ? WHERE id = ?")
      .bind(10 * DAY_MS, m.tenantId)
      .run();
    const overdueEvents = () => one<{ c: number }>("SELECT COUNT(*) AS c FROM events WHERE loan_id = ? AND type = 'loan.overdue'", loan.body.id);
    expect((await overdueEvents()).c).toBe(0);

    const tick = await stack.scheduled();
    expect(tick.outcome).toBe("ok");
    // Each job ran as its own invocation; the listener, stopped at one page, went on in a continuation.
    expect(tick.jobs!.filter((j) => j === "settlement-listener")).toHaveLength(2);
    for (const job of ["sweep-loans", "relay-outbox", "recover-deliveries", "retry-funding", "heartbeat", "gas-alerts"]) expect(tick.jobs).toContain(job);

    // The listener read the whole ledger, the sweep marked the loan overdue and defaulted it (10 days
    // > 3 days + 3 of grace), and the relay sent every event out, its own and the sweep's.
    const ledger = await one<{ lastBlock: number }>(
      "SELECT last_block AS lastBlock FROM sandbox_ledgers WHERE tenant_id = ? AND chain = 'TON_TESTNET'",
      m.tenantId,
    );
    expect(ledger.lastBlock).toBe(head);
    expect((await overdueEvents()).c).toBe(1);
    expect((await m.api(`/v1/loans/${loan.body.id}`)).body.status).toBe("DEFAULTED");
    expect((await unrelayed()).c).toBe(0);
  }, 120_000);
});
