/**
 * The requests one Queue consumer invocation has out at once, and who gets
 * the next free one.
 *
 * Cloudflare lets a Worker invocation have at most six requests waiting for
 * their response headers; a seventh waits inside the runtime, unseen, and
 * its timeout (DECISIONS.md: 10 s, counted from the call) runs while it
 * waits. Sending a whole batch at once would let a few endpoints that never
 * answer hold every connection, so that the batch's other requests, to other
 * tenants' healthy endpoints, time out unsent and count as failed attempts.
 * (The local runtime, workerd under Miniflare, has no such limit, so
 * without this the two would behave differently.)
 *
 * So the consumer keeps its own queue of requests:
 * - at most `REQUESTS_AT_ONCE` (6) out at once, so a request's timeout starts
 *   when it really goes out;
 * - the next free slot goes to the longest-waiting request whose tenant and
 *   endpoint may take one: a tenant may hold all six while it is the only one
 *   seen in the invocation, `TENANT_SHARE` (3) once another tenant has asked,
 *   so one tenant's endpoints never hold more than half;
 * - a slow endpoint holds at most one while any other endpoint's request
 *   waits (more only when a slot would otherwise stay idle): one whose
 *   request was out longer than half the delivery timeout (`slowAfterMs`),
 *   or got no answer (timed out, could not connect), in this invocation, or
 *   whose attempt is a retry (it failed before);
 * - a request that waited `waitMs` without a slot (one and a half delivery
 *   timeouts, `slotWaitMs`: longer than a request ahead of it can take) is
 *   not sent now: the caller defers it (deliver.ts: its claim is released and it goes back to
 *   the Queue), so a dead endpoint's backlog cannot keep an invocation, and
 *   the messages it holds, waiting for many rounds of timeouts.
 */
export const REQUESTS_AT_ONCE = 6;
export const TENANT_SHARE = 3;
export const SLOW_ENDPOINT_SHARE = 1;
/** How long a request waits for a slot: longer than the delivery timeout, so one waiting behind a request that times out gets its slot. */
export const slotWaitMs = (timeoutMs: number) => Math.ceil(timeoutMs * 1.5);
/** When a request still out makes its endpoint slow: half the delivery timeout (5 s in production). */
export const slowAfterMs = (timeoutMs: number) => Math.ceil(timeoutMs / 2);

/** Whose request asks for a slot. `slow`: its endpoint is known to have failed (the attempt is a retry). */
export type SlotRequest = { tenantId: string; endpointId: string; slow?: boolean };

/** A slot taken; `done` gives it back (`answered`: the endpoint answered at all, whatever its status). */
export type Slot = { done(outcome: { answered: boolean }): void };

export type SendSlots = {
  /** The next slot for this request, in the order asked; undefined if none came within `waitMs` (default: the slots' own). */
  take(request: SlotRequest, waitMs?: number): Promise<Slot | undefined>;
};

type Waiter = SlotRequest & { grant: (slot: Slot) => void; timer?: ReturnType<typeof setTimeout> };

/** One invocation's slots (the consumer makes one per batch); `waitMs`: see slotWaitMs. */
export function sendSlots(options: { waitMs: number; slowAfterMs: number }): SendSlots {
  const { slowAfterMs } = options;
  let out = 0;
  const byTenant = new Map<string, number>();
  const byEndpoint = new Map<string, number>();
  const tenantsSeen = new Set<string>();
  const slow = new Set<string>();
  const waiting: Waiter[] = [];
  const add = (map: Map<string, number>, key: string, n: number) => map.set(key, (map.get(key) ?? 0) + n);

  /** Whether `w` may have a slot now; `idle`: no waiting request of another endpoint fits, so a slow endpoint may take more than one. */
  const fits = (w: SlotRequest, idle: boolean) =>
    out < REQUESTS_AT_ONCE &&
    (byTenant.get(w.tenantId) ?? 0) < (tenantsSeen.size <= 1 ? REQUESTS_AT_ONCE : TENANT_SHARE) &&
    (idle || !slow.has(w.endpointId) || (byEndpoint.get(w.endpointId) ?? 0) < SLOW_ENDPOINT_SHARE);

  const open = (w: SlotRequest): Slot => {
    out++;
    add(byTenant, w.tenantId, 1);
    add(byEndpoint, w.endpointId, 1);
    const slowTimer = setTimeout(() => slow.add(w.endpointId), slowAfterMs);
    let closed = false;
    return {
      done({ answered }) {
        if (closed) return;
        closed = true;
        clearTimeout(slowTimer);
        if (!answered) slow.add(w.endpointId);
        out--;
        add(byTenant, w.tenantId, -1);
        add(byEndpoint, w.endpointId, -1);
        grantWaiting();
      },
    };
  };

  /** Grants, in the order asked, every waiting request that fits; then, if slots are left that no one else can use, slow endpoints' too. */
  const grantWaiting = () => {
    for (const idle of [false, true]) {
      for (let i = 0; i < waiting.length && out < REQUESTS_AT_ONCE; ) {
        const w = waiting[i]!;
        if (!fits(w, idle)) {
          i++;
          continue;
        }
        waiting.splice(i, 1);
        clearTimeout(w.timer);
        w.grant(open(w));
      }
    }
  };

  return {
    take(request, waitMs = options.waitMs) {
      tenantsSeen.add(request.tenantId);
      if (request.slow) slow.add(request.endpointId);
      return new Promise<Slot | undefined>((resolve) => {
        const w: Waiter = { ...request, grant: resolve };
        waiting.push(w);
        grantWaiting();
        if (!waiting.includes(w) || !Number.isFinite(waitMs)) return;
        w.timer = setTimeout(() => {
          const i = waiting.indexOf(w);
          if (i < 0) return;
          waiting.splice(i, 1);
          resolve(undefined);
        }, waitMs);
      });
    },
  };
}

/** No limit: for callers outside a consumer's batch (the Bun-tier tests of deliver.ts that do not look at slots). */
export const unlimitedSlots: SendSlots = { take: async () => ({ done: () => undefined }) };
