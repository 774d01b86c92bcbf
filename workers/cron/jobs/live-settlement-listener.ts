import { createDb } from "../../../db/create-db.ts";
import { tenantDatabase } from "../../../db/databases.ts";
import { chainPortFromEnv } from "../../../shared/chains/chain-port-from-env.ts";
import { liveChainSettings } from "../../../shared/chains/live/live-config.ts";
import { toncenterNetwork } from "../../../shared/chains/ton/live/toncenter-network.ts";
import { systemClock } from "../../../shared/domain/clock.ts";
import { durableLoanWriter } from "../../../shared/loans/durable-loan-writer.ts";
import { pollLiveEvmChains } from "../../../shared/settlement/evm-listener.ts";
import { pollTonCollections } from "../../../shared/settlement/ton-listener.ts";
import type { CronJob } from "../job.ts";

/**
 * The settlement listener of the live chains, once a tick in an invocation of
 * its own (its RPC reads are subrequests, budget.ts): each configured live
 * EVM chain (POLYGON, BASE) from its cursor, with confirmations, reorg
 * handling and the search for reverted repayments (evm-listener.ts; a chain
 * whose RPC fails backs off on its own), then, on live TON, each tenant's
 * verified COLLECTIONS wallet from its own (lt, hash) cursor
 * (ton-listener.ts). Nothing configured: nothing read.
 */
export const liveSettlementListenerJob: CronJob = {
  name: "live-settlement-listener",
  crons: ["* * * * *"],
  async run({ env, log }) {
    const live = liveChainSettings(env);
    if (Object.keys(live).length === 0) return { more: false };
    const db = createDb(tenantDatabase(env));
    const deps = { db, chain: chainPortFromEnv(env, db), writer: durableLoanWriter(env.LOANS), clock: systemClock };
    for (const report of await pollLiveEvmChains(deps, live)) {
      if (report.error) log.error("settlement listener failed", { chain: report.chain, error: report.error, rateLimited: report.rateLimited });
      else if (report.transactions > 0 || report.reorg || report.failures > 0) log.info("settlement listener", report);
      if (report.held)
        log.error("settlement listener: payments held", { chain: report.chain, held: report.held, reason: report.heldError, applied: report.heldApplied });
      else if (report.heldApplied) log.info("settlement listener: held payments applied", { chain: report.chain, applied: report.heldApplied });
      if (report.revertScanSkipped)
        log.info("settlement listener: the search for reverted repayments skipped blocks too far behind", {
          chain: report.chain,
          blocks: report.revertScanSkipped,
        });
      if (report.revertScanError)
        log.error("settlement listener: the search for reverted repayments failed", { chain: report.chain, error: report.revertScanError });
    }
    if (live.TON) {
      for (const report of await pollTonCollections({ ...deps, network: toncenterNetwork(live.TON), master: live.TON.tokenAddress })) {
        if (report.error) log.error("ton settlement listener failed", report);
        else if (report.held) log.error("ton settlement listener: payments held", report);
        else if (report.transactions > 0 || report.heldApplied) log.info("ton settlement listener", report);
      }
    }
    return { more: false };
  },
};
