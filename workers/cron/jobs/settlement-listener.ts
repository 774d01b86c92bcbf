import { createDb } from "../../../db/create-db.ts";
import { tenantDatabase } from "../../../db/databases.ts";
import { chainPortFromEnv } from "../../../shared/chains/chain-port-from-env.ts";
import { systemClock } from "../../../shared/domain/clock.ts";
import { durableLoanWriter } from "../../../shared/loans/durable-loan-writer.ts";
import { liveChainSettings } from "../../../shared/chains/live/live-config.ts";
import { toncenterNetwork } from "../../../shared/chains/ton/live/toncenter-network.ts";
import { pollLiveEvmChains } from "../../../shared/settlement/evm-listener.ts";
import { pollTonCollections } from "../../../shared/settlement/ton-listener.ts";
import { LISTENER_PAGE, ledgersToPoll, pollChain } from "../../../shared/settlement/listener.ts";
import { LISTENER_CALLS_PER_RUN, LISTENER_PAGES_PER_LEDGER } from "../budget.ts";
import type { CronJob } from "../job.ts";

/** At most this many sandbox ledgers are polled per tick; the rest wait for the next one. */
export const LEDGERS_PER_TICK = 100;

/**
 * The settlement listener: every sandbox tenant's ledger of a simulated chain
 * that is due (written since its last poll, or quiet for an hour), oldest
 * first and a bounded number per tick, each from its saved cursor and applied
 * idempotently. The sandbox helpers poll their own ledger right after their
 * transaction; this is the safety net. A run is bounded (budget.ts): one page
 * per ledger, and ledgers only while a full page still fits the run's calls;
 * a ledger left with a backlog stays due, and the run reports `more`, so the
 * queue handler continues it (then the next tick). Then, on the tick's own
 * run only, each configured live EVM chain (POLYGON, BASE) from its cursor,
 * with confirmations and reorg handling (evm-listener.ts); a chain whose RPC
 * fails backs off on its own. Then, on live TON, each tenant's verified
 * COLLECTIONS wallet (ton-listener.ts).
 */
export const settlementListenerJob: CronJob = {
  name: "settlement-listener",
  crons: ["* * * * *"],
  async run({ env, log, continuation = 0 }) {
    const db = createDb(tenantDatabase(env));
    const deps = {
      db,
      chain: chainPortFromEnv(env, db),
      writer: durableLoanWriter(env.LOANS),
      clock: systemClock,
    };
    const ledgers = await ledgersToPoll(deps.db, deps.clock.now(), LEDGERS_PER_TICK);
    let calls = 1;
    let more = ledgers.length === LEDGERS_PER_TICK;
    for (const ledger of ledgers) {
      // A ledger costs 3 calls plus 2 a transaction: take it only while a full page still fits.
      if (calls + 3 + 2 * LISTENER_PAGE * LISTENER_PAGES_PER_LEDGER > LISTENER_CALLS_PER_RUN) {
        more = true;
        break;
      }
      try {
        const report = await pollChain(deps, { chain: ledger.chain, sandboxTenantId: ledger.sandboxTenantId, maxPages: LISTENER_PAGES_PER_LEDGER });
        calls += 3 + 2 * report.transactions;
        if (report.more) more = true;
        if (report.transactions > 0) log.info("settlement listener", report);
      } catch (error) {
        calls += 3;
        // One ledger's failure must not starve the others; it is polled again on a later tick.
        log.error("settlement listener failed", { ...ledger, error: error instanceof Error ? error.message : String(error) });
      }
    }
    // The live chains keep their own cursors and RPC budgets: once per tick, not per continuation.
    if (continuation > 0) return { more };
    const live = liveChainSettings(env);
    for (const report of await pollLiveEvmChains(deps, live)) {
      if (report.error) log.error("settlement listener failed", { chain: report.chain, error: report.error, rateLimited: report.rateLimited });
      else if (report.transactions > 0 || report.reorg) log.info("settlement listener", report);
    }
    // Live TON: each tenant's verified COLLECTIONS wallet from its own (lt, hash) cursor (ton-listener.ts).
    if (live.TON) {
      for (const report of await pollTonCollections({ ...deps, network: toncenterNetwork(live.TON), master: live.TON.tokenAddress })) {
        if (report.error) log.error("ton settlement listener failed", report);
        else if (report.transactions > 0) log.info("ton settlement listener", report);
      }
    }
    return { more };
  },
};
