import { openSecret } from "../crypto/secret-box.ts";
import type { DeliveryDeps } from "./deliver.ts";
import type { Loaded } from "./delivery-rows.ts";
import { pausedUntil } from "./endpoint-pause.ts";
import { unlimitedSlots } from "./send-slots.ts";
import { deliveryHeaders } from "./signing.ts";

/**
 * `endpointDeleted`: not sent, its endpoint is deleted; the delivery ends FAILED at once, with no `webhook.delivery_failed`.
 * `finishedAt`: when its answer came (or it failed), on the deliveries' clock; when it is recorded if absent. A batch records
 * its attempts in groups as they finish (deliver.ts RECORD_GATHER_MS), and each keeps its own time (its record, its next
 * attempt's delay).
 */
export type AttemptResult = {
  succeeded: boolean;
  responseStatus: number | null;
  error: string | null;
  durationMs: number;
  endpointDeleted?: true;
  finishedAt?: Date;
  /** No answer within the delivery timeout (endpoint-pause.ts counts these). */
  timedOut?: true;
};
const ENDPOINT_DELETED: AttemptResult = { succeeded: false, responseStatus: null, error: "endpoint deleted", durationMs: 0, endpointDeleted: true };

/**
 * A request signed this long before its slot came is signed again, so its
 * `webhook-timestamp` says when it went out (receivers compare it with their
 * clock; Standard Webhooks suggests a tolerance of minutes).
 */
export const RESIGN_AFTER_MS = 5_000;

/**
 * The attempt, sent in one of the invocation's request slots (send-slots.ts;
 * the request's timeout starts once it has one), or "deferred" when none came
 * in time, or "paused" (not sent, no slot taken) while its endpoint is paused
 * for timing out (endpoint-pause.ts). A retry's endpoint failed before: it counts as slow from the start.
 * The request is signed before it asks for its slot, so a slot is held only
 * while the request is out (under load, each step inside it waits its turn
 * on the isolate's one thread).
 */
export async function sendInSlot(deps: DeliveryDeps, loaded: Loaded, attempt: number, secretOf?: SecretOpener): Promise<AttemptResult | "deferred" | "paused"> {
  if (loaded.endpointDeleted) return ENDPOINT_DELETED;
  // Its endpoint kept timing out: not sent now, and no slot taken (endpoint-pause.ts). Except a test event's first
  // attempt (POST /v1/webhooks/:id/test, one on its way at a time; not a redelivery of one, which would let a pile of
  // finished test deliveries through at once): the merchant who fixed the endpoint and sends one finds out at once (its
  // answer ends the pause), rather than after up to 10 minutes; it goes as a slow endpoint's request, one slot at most.
  const paused = pausedUntil(loaded.endpointPausedUntil, deps.clock.now()) !== null;
  if (paused && !(attempt === 1 && loaded.envelope.type === "webhook.test" && loaded.delivery.redeliveryOf === null)) return "paused";
  const { tenantId, endpointId } = loaded.delivery;
  let request = await signedRequest(deps, loaded, attempt, secretOf);
  if ("error" in request) return request.error;
  const slot = await (deps.slots ?? unlimitedSlots).take({ tenantId, endpointId, slow: attempt > 1 || paused });
  if (!slot) return "deferred";
  let result: AttemptResult | undefined;
  try {
    if (deps.clock.now().getTime() - request.signedAt > RESIGN_AFTER_MS) request = await signedRequest(deps, loaded, attempt, secretOf);
    result = { ...("error" in request ? request.error : await sendOnce(deps, loaded.url, request)), finishedAt: deps.clock.now() };
    return result;
  } finally {
    slot.done({ answered: typeof result?.responseStatus === "number" });
  }
}

/**
 * A delivery's request, signed now. A secret that cannot be opened (a wrong
 * SECRETS_KEY) is a failed attempt, as a request that could not be sent is.
 */
async function signedRequest(
  deps: DeliveryDeps,
  loaded: Loaded,
  attempt: number,
  secretOf?: SecretOpener,
): Promise<{ body: string; headers: Record<string, string>; signedAt: number } | { error: AttemptResult }> {
  const signedAt = deps.clock.now().getTime();
  try {
    const secret = await (secretOf ?? ((c) => openSecret(c, deps.secretsKey)))(loaded.secretCiphertext);
    const body = JSON.stringify(loaded.envelope);
    const headers = await deliveryHeaders({
      secret,
      eventId: loaded.envelope.id,
      eventType: loaded.envelope.type,
      deliveryId: loaded.delivery.id,
      body,
      now: deps.clock.now(),
    });
    headers["x-svc-attempt"] = String(attempt);
    return { body, headers, signedAt };
  } catch (err) {
    return { error: failedToSend(err, deps.clock.now().getTime() - signedAt, deps.timeoutMs) };
  }
}

/** An endpoint's signing secret, opened from its ciphertext. */
export type SecretOpener = (ciphertext: string) => Promise<string>;

/** POSTs the signed request once. Redirects are not followed (a 3xx fails), so an endpoint cannot bounce us elsewhere. */
async function sendOnce(deps: DeliveryDeps, url: string, request: { body: string; headers: Record<string, string> }): Promise<AttemptResult> {
  const started = Date.now();
  try {
    const res = await deps.fetch(url, {
      method: "POST",
      headers: request.headers,
      body: request.body,
      redirect: "manual",
      signal: AbortSignal.timeout(deps.timeoutMs),
    });
    await res.body?.cancel().catch(() => undefined);
    const ok = res.status >= 200 && res.status < 300;
    return { succeeded: ok, responseStatus: res.status, error: ok ? null : `HTTP ${res.status}`, durationMs: Date.now() - started };
  } catch (err) {
    return failedToSend(err, Date.now() - started, deps.timeoutMs);
  }
}

function failedToSend(err: unknown, durationMs: number, timeoutMs: number): AttemptResult {
  const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
  const error = timedOut ? `no answer within ${timeoutMs} ms` : `network error: ${err instanceof Error ? err.message : String(err)}`;
  return { succeeded: false, responseStatus: null, error: error.slice(0, 500), durationMs, ...(timedOut ? { timedOut: true as const } : {}) };
}
