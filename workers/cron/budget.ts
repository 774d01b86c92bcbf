/**
 * What one job's invocation may do (Workers Paid: 1,000 subrequests, 1,000 D1
 * queries and 30 s of CPU per invocation; a Durable Object call is a
 * subrequest, the queries it makes are its own). Each job runs in its own
 * invocation (dispatch.ts), capped below those limits; a job that stops at
 * its cap with work left reports `more`, and the queue handler enqueues its
 * continuation, at most MAX_CONTINUATIONS per job and tick; what is left
 * after those waits for the next tick (a minute later).
 */

/**
 * The settlement listener's budget in calls: a sandbox ledger costs 3 (its
 * cursor, the chain read, the cursor write) plus 2 per transaction (the loan's
 * read and its writer's call), so a page of 100 transactions ~203. A ledger is
 * taken while a full page still fits, one page at a time: at most ~900 calls.
 */
export const LISTENER_CALLS_PER_RUN = 900;
/** The listener reads one page (LISTENER_PAGE transactions) per ledger per run; a ledger with a backlog stays due. */
export const LISTENER_PAGES_PER_LEDGER = 1;

/**
 * The live chains' listener runs in a job of its own (live-settlement-listener.ts):
 * per EVM chain its log ranges (at most 25 `eth_getLogs` pairs), a receipt and a
 * block per transaction found, and the search for reverted repayments, at most
 * MAX_REVERT_SCAN_BLOCKS (200) block reads plus a receipt per repay call found
 * (shared/chains/evm/live/evm-failed-repays.ts).
 */

/** Sweep pages per run: 2 reads and up to 100 loan-writer calls a page, so ~510 calls. The funding retry likewise (RETRY_PAGES_PER_RUN, shared/sweeps/run-sweeps.ts). */
export const SWEEP_PAGES_PER_RUN = 5;

/** Relay pages per run: ~4 D1 round trips and 1-2 queue sends per page of 50 events, so 10 pages (500 events) ~60 calls and well within CPU. */
export const RELAY_PAGES_PER_RUN = 10;

/** Continuations per job and tick (so a tick's backlog work is bounded to 1 + 4 runs of each job). */
export const MAX_CONTINUATIONS = 4;
