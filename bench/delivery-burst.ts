import type { Stack } from "../workers/local/stack.ts";
import { signedReceiver } from "./signed-receiver.ts";

type Delays = (timed: { createdAt: number; arrivedAt: number }[]) => { p50: number; p99: number; max: number };

/**
 * Webhook delivery under a burst, end to end: events committed faster than
 * they can be delivered, then relayed by the real relay, queued, consumed,
 * signed and sent, timed from commit to arrival.
 *
 * This machine cannot make events that fast through the API (one core makes
 * 60–90 events a second from loans), so the burst is committed with SQL: a
 * fresh tenant (`apiKey`'s) registers one endpoint (`["*"]`) on a receiver
 * here and makes one real loan, whose three events are then copied
 * `events` times in one INSERT, each copy with an id of its own (in its
 * envelope too), the next `seq`s, unrelayed, committed now (its envelope's
 * `createdAt`, which the receiver times from). One write by the tenant then
 * relays them as every write does (the relay after a write:
 * shared/webhooks/relay-after-commit.ts; a run is at most 800 events, so a
 * burst up to that needs no cron tick). Prints events/s from the commit to
 * the last arrival, and commit → arrival p50/p99/max (and, given `cpuMillis`,
 * the stack's CPU per event over that time); every event must arrive once, signed.
 */
export async function deliveryBurst(stack: Stack, input: { apiKey: string; events: number; delaysOf: Delays; cpuMillis?: () => number }) {
  const headers = { "x-api-key": input.apiKey, "content-type": "application/json" };
  const { arrivals, state, server: receiver } = signedReceiver((envelope) => Date.parse(envelope.createdAt));
  try {
    const me = (await (await fetch(`${stack.baseUrl}/v1/me`, { headers })).json()) as { tenant: { id: string }; merchantConfigs: { loanProductId: string }[] };
    const tenantId = me.tenant.id;
    const registered = await fetch(`${stack.baseUrl}/v1/webhooks`, {
      method: "POST",
      headers,
      body: JSON.stringify({ url: `http://127.0.0.1:${receiver.port}/burst`, events: ["*"] }),
    });
    if (registered.status !== 201) return undefined;
    state.secret = ((await registered.json()) as { secret: string }).secret;
    const loan = await fetch(`${stack.baseUrl}/v1/loans`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        loanProductId: me.merchantConfigs[0]!.loanProductId,
        borrowerRef: "burst-bench",
        borrowerWalletAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
        chain: "POLYGON_AMOY",
        principalAmount: "10.00",
        idempotencyKey: `burst-bench-${tenantId}`,
      }),
    });
    if (loan.status !== 201) throw new Error(`POST /v1/loans answered ${loan.status} ${await loan.text()}`);
    const db = await stack.mf.getD1Database("DB", stack.names.api);
    const source = (await db.prepare("SELECT COUNT(*) AS n FROM events WHERE tenant_id = ?").bind(tenantId).first<{ n: number }>())?.n ?? 0;
    const deadline = Date.now() + 30_000;
    while (arrivals.size < source && Date.now() < deadline) await Bun.sleep(10);
    if (arrivals.size < source) throw new Error(`the burst's source events did not arrive (${arrivals.size} of ${source})`);
    const before = arrivals.size;

    // Copies: n = 0 … copies-1 of each source event (r = its rank), ids `<run>-0000-4000-8000-<12 digits>`.
    const copies = Math.ceil(input.events / source);
    const run = crypto.randomUUID().slice(0, 8);
    const cpuBefore = input.cpuMillis?.() ?? 0;
    const committedAt = Date.now();
    const iso = new Date(committedAt).toISOString();
    await db
      .prepare(
        `INSERT INTO events (id, seq, tenant_id, type, mode, loan_id, envelope, created_at, relayed_at)
         WITH RECURSIVE k(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM k WHERE n < ?1 - 1),
           src AS (SELECT *, row_number() OVER (ORDER BY seq) - 1 AS r FROM events WHERE tenant_id = ?2),
           top AS (SELECT MAX(seq) AS m FROM events),
           copy AS (SELECT k.n * (SELECT COUNT(*) FROM src) + src.r AS i, src.* FROM k, src)
         SELECT ?3 || '-0000-4000-8000-' || printf('%012d', copy.i), top.m + 1 + copy.i, copy.tenant_id, copy.type, copy.mode, copy.loan_id,
                json_set(copy.envelope, '$.id', ?3 || '-0000-4000-8000-' || printf('%012d', copy.i), '$.createdAt', ?4), ?5, NULL
         FROM copy, top ORDER BY copy.i`,
      )
      .bind(copies, tenantId, run, iso, committedAt)
      .run();
    const burst = copies * source;
    // One write by the tenant: its relay after the write takes the burst.
    const poke = await fetch(`${stack.baseUrl}/v1/sandbox/liquidity`, { method: "PUT", headers, body: JSON.stringify({ available: "100000000.00" }) });
    if (poke.status !== 200) throw new Error(`PUT /v1/sandbox/liquidity answered ${poke.status} ${await poke.text()}`);
    const until = Date.now() + 60_000;
    while (arrivals.size < before + burst && Date.now() < until) await Bun.sleep(10);
    const timed = [...arrivals.entries()].filter(([id]) => id.startsWith(`${run}-`)).map(([, a]) => a);
    const last = Math.max(...timed.map((a) => a.arrivedAt));
    const cpuMs = (input.cpuMillis?.() ?? 0) - cpuBefore;
    return {
      committed: burst,
      arrived: timed.length,
      duplicates: state.requests - arrivals.size,
      badSignatures: state.badSignatures,
      perSecond: timed.length / ((last - committedAt) / 1000),
      /** The stack's CPU from the commit until the last arrival (or the deadline), per event that arrived. */
      cpuPerEvent: input.cpuMillis ? cpuMs / Math.max(1, timed.length) : undefined,
      /** The stack's CPU over that time, as a share of one core (workerd runs every isolate on one thread). */
      busy: input.cpuMillis ? cpuMs / Math.max(1, last - committedAt) : undefined,
      ...input.delaysOf(timed),
    };
  } finally {
    receiver.stop(true);
  }
}
