import { createDb } from "../../../db/create-db.ts";
import { chainPortFromEnv } from "../../../shared/chains/chain-port-from-env.ts";
import { systemClock } from "../../../shared/domain/clock.ts";
import { durableLoanWriter } from "../../../shared/loans/durable-loan-writer.ts";
import { liveChainSettings } from "../../../shared/chains/live/live-config.ts";
import { toncenterNetwork } from "../../../shared/chains/ton/live/toncenter-network.ts";
import { pollLiveEvmChains } from "../../../shared/settlement/evm-listener.ts";
import { pollTonCollections } from "../../../shared/settlement/ton-listener.ts";
import { ledgersToPoll, pollChain } from "../../../shared/settlement/listener.ts";
import type { CronJob } from "../job.ts";

/** At most this many sandbox ledgers are polled per tick; the rest wait for the next one. */
export const LEDGERS_PER_TICK = 100;

/**
 * The settlement listener: every sandbox tenant's ledger of a simulated chain
 * that is due (written since its last poll, or quiet for an hour), oldest
 * first and a bounded number per tick, each from its saved cursor and applied
 * idempotently. The sandbox helpers poll their own ledger right after their
 * transaction; this is the safety net. Then each configured live EVM chain
 * (POLYGON, BASE) from its cursor, with confirmations and reorg handling
 * (evm-listener.ts); a chain whose RPC fails backs off on its own. Then, on
 * live TON, each tenant's verified COLLECTIONS wallet (ton-listener.ts).
 */
export const settlementListenerJob: CronJob = {
  name: "settlement-listener",
  crons: ["* * * * *"],
  async run({ env, log }) {
    const db = createDb(env.DB);
    const deps = {
      db,
      chain: chainPortFromEnv(env, db),
      writer: durableLoanWriter(env.LOANS),
      clock: systemClock,
    };
    for (const ledger of await ledgersToPoll(deps.db, deps.clock.now(), LEDGERS_PER_TICK)) {
      try {
        const report = await pollChain(deps, { chain: ledger.chain, sandboxTenantId: ledger.sandboxTenantId });
        if (report.transactions > 0) log.info("settlement listener", report);
      } catch (error) {
        // One ledger's failure must not starve the others; it is polled again on a later tick.
        log.error("settlement listener failed", { ...ledger, error: error instanceof Error ? error.message : String(error) });
      }
    }
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
  },
};
