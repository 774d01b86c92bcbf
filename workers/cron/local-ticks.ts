/**
 * Development only: which dispatched jobs of a tick have run, so the local
 * stack's `scheduled()` can wait for the work a tick set off (its jobs and
 * their continuations) as it waited for the inline run before. Locally the
 * cron worker is one isolate, so the scheduled and queue handlers share this
 * map; deployed, nothing records here (ENVIRONMENT is production).
 */
type Tick = { pending: number; failed: string[]; ran: string[]; at: number };
const ticks = new Map<string, Tick>();

export const tickKey = (cron: string, scheduledTime: number) => `${cron}@${scheduledTime}`;

export function tickDispatched(key: string, jobs: number) {
  const now = Date.now();
  // Forget ticks older than 10 minutes: the map stays small in a long `npm run dev`.
  for (const [k, t] of ticks) if (now - t.at > 600_000) ticks.delete(k);
  ticks.set(key, { pending: jobs, failed: [], ran: [], at: now });
}

/** A run of the tick enqueued a continuation: one more to wait for. */
export function tickContinued(key: string) {
  const t = ticks.get(key);
  if (t) t.pending++;
}

/** A job's first try ended (its Queue retries, if it failed, run on without the tick). */
export function tickJobSettled(key: string, job: string, ok: boolean) {
  const t = ticks.get(key);
  if (!t) return;
  t.pending--;
  t.ran.push(job);
  if (!ok) t.failed.push(job);
}

/** `GET /__local/cron-tick?key=…`: the tick's state, or null for another path. */
export function localTickResponse(request: Request): Response | null {
  const url = new URL(request.url);
  if (url.pathname !== "/__local/cron-tick") return null;
  const t = ticks.get(url.searchParams.get("key") ?? "");
  return t ? Response.json({ pending: t.pending, failed: t.failed, ran: t.ran }) : Response.json({ error: "unknown tick" }, { status: 404 });
}
