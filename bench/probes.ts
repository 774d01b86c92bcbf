import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { WorkerOptions } from "miniflare";
import { readWranglerConfig, REPO_ROOT } from "../workers/local/wrangler-config.ts";

/** The probe worker's name in the stack's Miniflare. */
export const PROBE_WORKER = "svc-credit-bench-probe";
/** Its own queue: a producer with no consumer, so a probe send has no side effect on the deliveries queue. */
export const PROBE_QUEUE = "svc-credit-bench-probe-queue";

/**
 * The probe worker (bench/probe-worker.ts) as the stack's `extraWorkers`:
 * routed at `/probe/*` on the api's host, bound to the api's D1 database (the
 * same database id, so the same local database), a Durable Object class of
 * its own and a queue of its own. Built here, for the bench only.
 */
export function probeWorker(): WorkerOptions {
  const api = readWranglerConfig("wrangler.toml");
  const database = api.d1_databases?.find((d) => d.binding === "DB");
  if (!database) throw new Error("wrangler.toml has no DB binding");
  const source = readFileSync(join(REPO_ROOT, "bench", "probe-worker.ts"), "utf8");
  return {
    name: PROBE_WORKER,
    compatibilityDate: api.compatibility_date,
    compatibilityFlags: api.compatibility_flags ?? [],
    modules: [{ type: "ESModule", path: join(REPO_ROOT, "bench", "probe-worker.js"), contents: new Bun.Transpiler({ loader: "ts" }).transformSync(source) }],
    routes: ["*/probe/*"],
    d1Databases: { DB: database.database_id },
    durableObjects: { PROBE_OBJECTS: "ProbeObject" },
    queueProducers: { PROBE_QUEUE: { queueName: PROBE_QUEUE } },
  };
}
