import { createDb } from "../../../db/create-db.ts";
import { tenantDatabase } from "../../../db/databases.ts";
import { chainPortFromEnv } from "../../../shared/chains/chain-port-from-env.ts";
import { systemClock } from "../../../shared/domain/clock.ts";
import { durableLoanWriter } from "../../../shared/loans/durable-loan-writer.ts";
import { deferFailedLedger, LISTENER_PAGE, ledgersToPoll, pollChain } from "../../../shared/settlement/listener.ts";
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
 * queue handler continues it (then the next tick). The live chains have a
 * job of their own (live-settlement-listener.ts), so their RPC reads never
 * share an invocation's subrequests with the sandbox ledgers.
 */
export const settlementListenerJob: CronJob = {
  name: "settlement-listener",
  crons: ["* * * * *"],
  async run({ env, log }) {
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
      const startedAt = deps.clock.now();
      try {
        const report = await pollChain(deps, { chain: ledger.chain, sandboxTenantId: ledger.sandboxTenantId, maxPages: LISTENER_PAGES_PER_LEDGER });
        calls += 3 + 2 * report.transactions;
        if (report.more) more = true;
        if (report.transactions > 0) log.info("settlement listener", report);
      } catch (error) {
        calls += 4;
        // One ledger's failure must not starve the others: it waits a few minutes before its next poll.
        log.error("settlement listener failed", { ...ledger, error: error instanceof Error ? error.message : String(error) });
        if (ledger.sandboxTenantId) {
          await deferFailedLedger(deps, { sandboxTenantId: ledger.sandboxTenantId, chain: ledger.chain, startedAt, now: deps.clock.now() }).catch(
            () => undefined,
          );
        }
      }
    }
    return { more };
  },
};
