import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createClient } from "@libsql/client";
import { createDb } from "../../db/create-db.ts";
import { readMigrations } from "../../db/migration-files.ts";
import { migrateLibsql } from "../../db/migrate.ts";
import type { ChainPort } from "../chains/chain-port.ts";
import { createTestApp, type TestApp } from "../testing/harness.ts";
import { apiKey, sandboxTenant } from "../testing/loan-fixtures.ts";
import { chainConfig } from "../chains/chain-config.ts";
import { deferFailedLedger, FAILED_LEDGER_RETRY_MS, LEDGER_REPOLL_MS, ledgersToPoll, markLedgerWritten, pollChain } from "./listener.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const TON_WALLET = `0:${"42".repeat(32)}`;
const deps = (chain: ChainPort = t.deps.chain) => ({ db: t.db, chain, writer: t.deps.writer, clock: t.clock });
const dueAt = async (at: Date) => (await ledgersToPoll(t.db, at, 1000)).map((l) => `${l.sandboxTenantId}:${l.chain}`);

describe("which sandbox ledgers the cron job polls", () => {
  test("a helper's write registers its tenant's ledger; its own poll puts the next one an hour out; a quiet ledger is due again after the hour", async () => {
    const m = await sandboxTenant(t);
    const name = `${m.tenantId}:TON_TESTNET`;
    expect(await dueAt(t.clock.now())).not.toContain(name);
    t.clock.advance(1);
    const res = await t.request("POST", "/v1/sandbox/chain/faucet", {
      body: { chain: "TON_TESTNET", address: TON_WALLET, amount: "1.00" },
      headers: apiKey(m.key),
    });
    expect(res.status).toBe(200);
    // The helper marked the ledger before its write and polled it after, here within one
    // millisecond of the fixed clock, which counts as "maybe after the read": due once more.
    expect(await dueAt(t.clock.now())).toContain(name);
    t.clock.advance(1);
    await pollChain(deps(), { chain: "TON_TESTNET", sandboxTenantId: m.tenantId });
    expect(await dueAt(t.clock.now())).not.toContain(name);
    expect(await dueAt(new Date(t.clock.now().getTime() + LEDGER_REPOLL_MS))).toContain(name);
    // Another tenant's ledgers are theirs: nothing of this one is listed for them.
    expect((await ledgersToPoll(t.db, new Date(t.clock.now().getTime() + LEDGER_REPOLL_MS), 1000)).filter((l) => l.sandboxTenantId === m.tenantId)).toEqual([
      { sandboxTenantId: m.tenantId, chain: "TON_TESTNET" },
    ]);
  });

  test("a write marked while a poll is reading keeps the ledger due (the poll may have read before the write landed)", async () => {
    const m = await sandboxTenant(t);
    const name = `${m.tenantId}:SOLANA_DEVNET`;
    const writingMeanwhile: ChainPort = {
      ...t.deps.chain,
      readTransactions: async (chain, afterBlock, limit, scope) => {
        t.clock.advance(1);
        await markLedgerWritten({ db: t.db }, { sandboxTenantId: m.tenantId, chain: "SOLANA_DEVNET", now: t.clock.now() });
        return t.deps.chain.readTransactions(chain, afterBlock, limit, scope);
      },
    };
    await pollChain(deps(writingMeanwhile), { chain: "SOLANA_DEVNET", sandboxTenantId: m.tenantId });
    expect(await dueAt(t.clock.now())).toContain(name);
    t.clock.advance(1);
    await pollChain(deps(), { chain: "SOLANA_DEVNET", sandboxTenantId: m.tenantId });
    expect(await dueAt(t.clock.now())).not.toContain(name);
  });

  test("a ledger whose poll threw waits a few minutes before the cron polls it again (it kept the head of the line, and 100 of them stopped every other ledger's polls); one a helper wrote to during the poll stays due", async () => {
    const m = await sandboxTenant(t);
    const name = `${m.tenantId}:TON_TESTNET`;
    await markLedgerWritten({ db: t.db }, { sandboxTenantId: m.tenantId, chain: "TON_TESTNET", now: t.clock.now() });
    expect(await dueAt(t.clock.now())).toContain(name);
    const startedAt = new Date(t.clock.now().getTime() + 1);
    await deferFailedLedger({ db: t.db }, { sandboxTenantId: m.tenantId, chain: "TON_TESTNET", startedAt, now: new Date(startedAt.getTime() + 500) });
    expect(await dueAt(new Date(startedAt.getTime() + 1_000))).not.toContain(name);
    expect(await dueAt(new Date(startedAt.getTime() + 500 + FAILED_LEDGER_RETRY_MS))).toContain(name);
    // A helper's write while the next poll runs (after its start, before its failure) keeps the ledger due.
    const next = new Date(startedAt.getTime() + 500 + FAILED_LEDGER_RETRY_MS);
    await markLedgerWritten({ db: t.db }, { sandboxTenantId: m.tenantId, chain: "TON_TESTNET", now: new Date(next.getTime() + 200) });
    await deferFailedLedger({ db: t.db }, { sandboxTenantId: m.tenantId, chain: "TON_TESTNET", startedAt: next, now: new Date(next.getTime() + 500) });
    expect(await dueAt(new Date(next.getTime() + 1_000))).toContain(name);
  });

  test("a transfer of more than a row can hold (2^53 units: thousands of faucet calls) is kept as money received of 0, never applied; the poll goes on (it threw on every poll)", async () => {
    const m = await sandboxTenant(t);
    const from = `0:${"ab".repeat(32)}`;
    await t.simChains.chain("TON_TESTNET", m.tenantId).faucet({ address: from, amount: 9_007_199_255_000_000n, sandboxTenantId: m.tenantId });
    const res = await t.request("POST", "/v1/sandbox/chain/transfers", {
      body: { chain: "TON_TESTNET", from, to: chainConfig("TON_TESTNET").settlementWallet, amount: "9007199255.000000", comment: "svc:repay:x" },
      headers: apiKey(m.key),
    });
    expect(res.status).toBe(200);
    const kept = await t.request("GET", "/v1/settlements/unmatched", { headers: apiKey(m.key) });
    expect(kept.body.data).toEqual([expect.objectContaining({ amount: "0.00", reason: "the amount is more than can be stored" })]);
  });

  test("at most `limit` ledgers, the longest waiting first", async () => {
    const tenants = [await sandboxTenant(t), await sandboxTenant(t)];
    const at = new Date(t.clock.now().getTime() - 3 * LEDGER_REPOLL_MS);
    await markLedgerWritten({ db: t.db }, { sandboxTenantId: tenants[1]!.tenantId, chain: "BASE_SEPOLIA", now: at });
    await markLedgerWritten({ db: t.db }, { sandboxTenantId: tenants[0]!.tenantId, chain: "BASE_SEPOLIA", now: new Date(at.getTime() + 1) });
    const [first, second] = await ledgersToPoll(t.db, t.clock.now(), 2);
    expect([first, second]).toEqual([
      { sandboxTenantId: tenants[1]!.tenantId, chain: "BASE_SEPOLIA" },
      { sandboxTenantId: tenants[0]!.tenantId, chain: "BASE_SEPOLIA" },
    ]);
  });
});

test("the due ledgers are read through the poll_after index, never a table scan", async () => {
  const client = createClient({ url: ":memory:" });
  await migrateLibsql(client, readMigrations());
  const { sql, params } = ledgersToPoll(createDb(client), new Date(), 100).toSQL();
  const plan = await client.execute({ sql: `EXPLAIN QUERY PLAN ${sql}`, args: params as never[] });
  const details = plan.rows.map((r) => String(r.detail)).join("\n");
  expect(details).toMatch(/SEARCH sandbox_ledgers USING INDEX sandbox_ledgers_poll_idx \(poll_after<\?\)/);
  client.close();
});
