import { DurableObject } from "cloudflare:workers";

/**
 * The bench's probe worker (bench/probes.ts adds it to the stack's
 * Miniflare; never deployed, in no wrangler.toml): the cost of one platform
 * operation each, with nothing else around it, so that the bench can print
 * every endpoint as a ratio to what workerd, D1, Durable Objects and Queues
 * do in the same run.
 *
 * - `GET /probe/noop`: no I/O at all (the worker's own floor).
 * - `GET /probe/read?id=<tenantId>`: one D1 SELECT by primary key (a tenant row).
 * - `POST /probe/write`: one one-row D1 INSERT into a scratch table (`probe_rows`).
 * - `POST /probe/do`: one Durable Object RPC, to a new object each time (what a loan cost when each had its own);
 *   `?object=<name>`: to that one object every time.
 * - `POST /probe/queue`: one Queue send, to a queue of its own that nothing consumes.
 * - `POST /probe/loans?id=<tenantId>`: the platform work a loan makes (`loanStorage`), and nothing else.
 */
type ProbeEnv = { DB: D1Database; PROBE_OBJECTS: DurableObjectNamespace<ProbeObject>; PROBE_QUEUE: Queue<{ n: number }> };

/** A Durable Object that answers one RPC and touches nothing (`ping`), or does a loan object's part of a loan (`fund`). */
export class ProbeObject extends DurableObject<ProbeEnv> {
  ping(n: number): number {
    return n + 1;
  }

  /** As a loan object funds a sandbox loan: one call to the chain's object, then one D1 batch of 4 writes (the funding commit). */
  async fund(): Promise<void> {
    await this.env.PROBE_OBJECTS.get(this.env.PROBE_OBJECTS.idFromName("chain")).ping(1);
    await this.env.DB.batch(Array.from({ length: 4 }, () => scratchRow(this.env.DB)));
  }
}

/** The scratch table, created once per isolate before its first write. */
let scratch: Promise<unknown> | undefined;
const scratchTable = (db: D1Database) =>
  (scratch ??= db.prepare("CREATE TABLE IF NOT EXISTS probe_rows (id TEXT PRIMARY KEY, payload TEXT NOT NULL, created_at INTEGER NOT NULL)").run());

let sent = 0;
let loansStored = 0;

const tenantRow = (db: D1Database, id: string) => db.prepare("SELECT * FROM tenants WHERE id = ?").bind(id);
const scratchRow = (db: D1Database) =>
  db.prepare("INSERT INTO probe_rows (id, payload, created_at) VALUES (?, ?, ?)").bind(crypto.randomUUID(), "x".repeat(200), Date.now());

/** Loan objects are sharded by name (shared/loans/durable-loan-writer.ts, LOAN_SHARDS): warm objects, as the loans' are. */
const LOAN_OBJECTS = 16;
/** Relay passes per loan under the loan bench's load (counted: about 350 passes for 1,400 loans; the api coalesces them per tenant). */
const RELAY_EVERY = 4;

/**
 * A loan's platform work, as `POST /v1/loans` makes it (its round trips as
 * `x-round-trips` counts them, its statements per round trip as the api
 * sends them) with nothing around it: one D1 read (the key lookup), one
 * batch of 7 reads (creation's reads), one batch of 9 writes (creation's
 * write), one Durable Object call to one of 16 warm objects, which calls
 * another object (the simulated chain) and writes one batch of 4 (the
 * funding commit); after the response, every 4th request, the outbox
 * relay's pass: a batch of 3 reads, then a batch of 2 writes and 2 reads.
 * Reads are a tenant row by primary key, writes one scratch row each: the
 * floor of the platform operations, not of SQLite's work on the loans'
 * indexes.
 */
async function loanStorage(env: ProbeEnv, ctx: ExecutionContext, tenantId: string): Promise<Response> {
  await scratchTable(env.DB);
  const n = loansStored++;
  await tenantRow(env.DB, tenantId).first();
  await env.DB.batch(Array.from({ length: 7 }, () => tenantRow(env.DB, tenantId)));
  await env.DB.batch(Array.from({ length: 9 }, () => scratchRow(env.DB)));
  await env.PROBE_OBJECTS.get(env.PROBE_OBJECTS.idFromName(`loan-${n % LOAN_OBJECTS}`)).fund();
  if (n % RELAY_EVERY === 0) {
    ctx.waitUntil(
      (async () => {
        await env.DB.batch(Array.from({ length: 3 }, () => tenantRow(env.DB, tenantId)));
        await env.DB.batch([scratchRow(env.DB), scratchRow(env.DB), tenantRow(env.DB, tenantId), tenantRow(env.DB, tenantId)]);
      })(),
    );
  }
  return Response.json({ ok: true }, { status: 201 });
}

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    switch (`${request.method} ${url.pathname}`) {
      case "GET /probe/noop":
        return Response.json({ ok: true });
      case "GET /probe/read": {
        const row = await env.DB.prepare("SELECT * FROM tenants WHERE id = ?")
          .bind(url.searchParams.get("id") ?? "")
          .first();
        return row ? Response.json(row) : Response.json({ error: "no such tenant" }, { status: 404 });
      }
      case "POST /probe/write": {
        await scratchTable(env.DB);
        const id = crypto.randomUUID();
        await env.DB.prepare("INSERT INTO probe_rows (id, payload, created_at) VALUES (?, ?, ?)").bind(id, "x".repeat(200), Date.now()).run();
        return Response.json({ id }, { status: 201 });
      }
      case "POST /probe/do": {
        // `?object=<name>`: always that object (warm); by default a new one each time.
        const stub = env.PROBE_OBJECTS.get(env.PROBE_OBJECTS.idFromName(url.searchParams.get("object") ?? crypto.randomUUID()));
        return Response.json({ n: await stub.ping(1) });
      }
      case "POST /probe/loans":
        return loanStorage(env, ctx, url.searchParams.get("id") ?? "");
      case "POST /probe/queue":
        await env.PROBE_QUEUE.send({ n: sent++ });
        return Response.json({ ok: true }, { status: 202 });
      default:
        return Response.json({ error: "no such probe" }, { status: 404 });
    }
  },
} satisfies ExportedHandler<ProbeEnv>;
