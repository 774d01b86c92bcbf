import { createDb } from "../../../db/create-db.ts";
import { tenantDatabase } from "../../../db/databases.ts";
import { chainPortFromEnv } from "../../../shared/chains/chain-port-from-env.ts";
import { systemClock } from "../../../shared/domain/clock.ts";
import { checkGasWallets } from "../../../shared/wallets/gas-alerts.ts";
import type { CronJob } from "../job.ts";

/**
 * DECISIONS.md "Live wallets", gas: `wallet.gas_low` once per dip of a GAS
 * wallet under its threshold. Balances come from the chain port's optional
 * `balances`; the port here is the simulated chains', which has none, so
 * until the live adapters plug in (the next issue) every balance is unread
 * and this job records nothing.
 */
export const gasAlertsJob: CronJob = {
  name: "gas-alerts",
  crons: ["* * * * *"],
  async run({ env, log }) {
    const db = createDb(tenantDatabase(env));
    const report = await checkGasWallets({
      db,
      chain: chainPortFromEnv(env, db),
      clock: systemClock,
    });
    if (report.alerted > 0 || report.rearmed > 0) log.info("gas alerts", report);
  },
};
