import { createDb } from "../../../db/create-db.ts";
import { CHAIN_CONFIG } from "../../../shared/chains/chain-config.ts";
import { durableSimulatedChains } from "../../../shared/chains/simulated/durable-simulated-chains.ts";
import { simulatedChainPort } from "../../../shared/chains/simulated/simulated-chain-port.ts";
import { systemClock } from "../../../shared/domain/clock.ts";
import { durableLoanWriter } from "../../../shared/loans/durable-loan-writer.ts";
import { pollChain } from "../../../shared/settlement/listener.ts";
import type { CronJob } from "../job.ts";

/**
 * The settlement listener: for each chain, the transactions since the saved
 * cursor, applied idempotently. Live chains join when their adapters do.
 */
export const settlementListenerJob: CronJob = {
  name: "settlement-listener",
  crons: ["* * * * *"],
  async run({ env, log }) {
    const deps = {
      db: createDb(env.DB),
      chain: simulatedChainPort(durableSimulatedChains(env.SIM_CHAINS)),
      writer: durableLoanWriter(env.LOANS),
      clock: systemClock,
    };
    for (const config of Object.values(CHAIN_CONFIG).filter((c) => c.simulated)) {
      const report = await pollChain(deps, config.chain);
      if (report.transactions > 0) log.info("settlement listener", report);
    }
  },
};
