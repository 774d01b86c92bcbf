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
 */
type ProbeEnv = { DB: D1Database; PROBE_OBJECTS: DurableObjectNamespace<ProbeObject>; PROBE_QUEUE: Queue<{ n: number }> };

/** A Durable Object that answers one RPC and touches nothing. */
export class ProbeObject extends DurableObject {
  ping(n: number): number {
    return n + 1;
  }
}

/** The scratch table, created once per isolate before its first write. */
let scratch: Promise<unknown> | undefined;
const scratchTable = (db: D1Database) =>
  (scratch ??= db.prepare("CREATE TABLE IF NOT EXISTS probe_rows (id TEXT PRIMARY KEY, payload TEXT NOT NULL, created_at INTEGER NOT NULL)").run());

let sent = 0;

export default {
  async fetch(request, env) {
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
      case "POST /probe/queue":
        await env.PROBE_QUEUE.send({ n: sent++ });
        return Response.json({ ok: true }, { status: 202 });
      default:
        return Response.json({ error: "no such probe" }, { status: 404 });
    }
  },
} satisfies ExportedHandler<ProbeEnv>;
