import { type Logger, safeErrorFields } from "../observability/logger.ts";
import { afterResponse, type ExecutionContextOf } from "../http/after-response.ts";
import { uncounted } from "../observability/round-trips.ts";
import type { VerbDeps } from "../verbs.ts";
import { drainOutbox } from "./relay-outbox.ts";

/** Pages one relay pass takes at most (the cron relay drains the rest). */
export const PASS_PAGES = 4;
/** Passes one request runs at most for the writes that joined it (then the next write, or the cron relay, takes over). */
export const MAX_PASSES = 4;

/** One tenant's relay in this isolate: a request is running passes; `dirty`, a write committed since its pass began. */
type Gate = { dirty: boolean };
const gates = new WeakMap<object, Map<string, Gate>>();

/**
 * Relays a tenant's new events right after a request committed them, with
 * one request at a time per tenant running the passes in this isolate.
 *
 * Before, every write ran a relay of its own after its response: under ten
 * concurrent loan requests, ten relays read the same unrelayed page, wrote
 * the same notifications (ignored as duplicates) and raced to claim the
 * same events. Now a write that finds another request relaying for its
 * tenant only marks the relay dirty and is done; the relaying request, when
 * its pass ends, runs another pass if a write committed meanwhile (that
 * pass starts after the write's commit, so it reads its events). So every
 * write's events still go out from a pass that started after its commit,
 * and ten concurrent writes cost one or two passes instead of ten.
 *
 * Each pass relays up to `PASS_PAGES` pages of `RELAY_PAGE` events (it
 * stops at a short page; a pass that stopped at the cap, with a backlog,
 * runs again as if a write had joined); a request runs at most
 * `MAX_PASSES` passes (800 events), so
 * its `waitUntil` stays short under a steady stream of writes (the next
 * write starts the next run). A pass that fails ends the run: its error is
 * the caller's to log, and the events wait for the next write or the cron
 * relay, as a failed relay always did. The passes run in the relaying
 * request's own context: no request awaits work another request started.
 */
export function relayAfterCommit(deps: Pick<VerbDeps, "db" | "queue">, input: { tenantId: string; now: () => Date }): Promise<void> {
  return coalescedPasses(deps.db, input.tenantId, async () => {
    const { more } = await drainOutbox(deps, { now: input.now(), tenantId: input.tenantId, maxPages: PASS_PAGES });
    return more;
  });
}

/**
 * `relayAfterCommit` for a request that committed a tenant's events: after
 * its response where the worker has an execution context (`waitUntil`),
 * before it returns where there is none (the Bun tier: `executionCtx`
 * throws). A failed relay is logged as `failure`, never the request's
 * error: the events wait for the next write or the cron relay.
 */
export async function relayAfterRequest(
  deps: Pick<VerbDeps, "db" | "queue" | "clock"> & { log: Logger },
  input: { tenantId: string; executionCtx: ExecutionContextOf; failure: string },
): Promise<void> {
  const { tenantId } = input;
  // Not the request's own round trips (the bench's count, development only): the relay is after the response.
  const task = uncounted(() => relayAfterCommit(deps, { now: () => deps.clock.now(), tenantId })).catch((err) =>
    deps.log.error(input.failure, { tenantId, ...safeErrorFields(err) }),
  );
  await afterResponse(input.executionCtx, task);
}

/**
 * Runs `pass` for `key` (within `scope`, the database: tests run several
 * in one process) unless a caller is already running passes for it: then
 * marks it dirty and returns at once. The running caller repeats `pass`
 * while a call came in during the last one, or the last one says there is
 * more (`true`: it stopped at its page cap with a backlog left),
 * `MAX_PASSES` times at most.
 */
export async function coalescedPasses(scope: object, key: string, pass: () => Promise<unknown>): Promise<void> {
  let byKey = gates.get(scope);
  if (!byKey) {
    byKey = new Map();
    gates.set(scope, byKey);
  }
  const running = byKey.get(key);
  if (running) {
    running.dirty = true;
    return;
  }
  const own: Gate = { dirty: false };
  byKey.set(key, own);
  try {
    for (let n = 0; n < MAX_PASSES; n++) {
      own.dirty = false;
      const more = await pass();
      if (!own.dirty && more !== true) return;
    }
  } finally {
    byKey.delete(key);
  }
}
