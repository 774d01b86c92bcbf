import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { accessSync, constants, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { Log, LogLevel, Miniflare, type WorkerOptions } from "miniflare";
import { migrateD1 } from "../../db/migrate.ts";
import { readMigrations } from "../../db/migration-files.ts";
import { buildWorkers, bundledWorkers } from "./build.ts";
import { isAlive } from "./process-alive.ts";
import { readWranglerConfig, REPO_ROOT, type WorkerKey, type WranglerConfig } from "./wrangler-config.ts";

export type StackLogLevel = "none" | "error" | "warn" | "info" | "debug";

export type StackOptions = {
  /** The base URL's port (api, and embed under `/v1/embed/*`); 0 picks a free one. Default 0. */
  port?: number;
  /** The embed worker's own port (`{embed_url}`); 0 picks a free one. Default 0. */
  embedPort?: number;
  /**
   * Where D1 (and every other store) persists, relative to the repository
   * root; undefined keeps everything in memory (in RAM: `memoryRoot`).
   */
  persistDir?: string;
  /** Fires the cron worker's triggers every this many ms; 0 never (call `scheduled()` yourself). Default 0. */
  cronIntervalMs?: number;
  /** Overrides per rate-limit binding name, e.g. `{ IP_LIMITER: { limit: 1_000_000 } }`. */
  ratelimits?: Record<string, { limit: number; period?: 10 | 60 }>;
  /** Vars for every worker, over the configs' and ENVIRONMENT=development (e.g. JWT_SECRET). */
  vars?: Record<string, string>;
  /** Miniflare's own log and the workers' console output. Default "error". */
  logLevel?: StackLogLevel;
  /** One line per request (Miniflare's request log). Default false. */
  logRequests?: boolean;
  /** Where the bundles are built (relative to the repository root). Default "dist". */
  outDir?: string;
  /** false: reuse the bundles already in `outDir` instead of building (once per process). Default true. */
  build?: boolean;
  /**
   * Workers added to the same Miniflare after the four (the bench's probe
   * worker): never deployed, in no wrangler.toml. Give each its own `routes`.
   */
  extraWorkers?: WorkerOptions[];
  /**
   * Bench-only workers (never deployed) started after the four, with the
   * bindings of their wrangler.toml mapped as the others' are: a built
   * script and its config (relative to the repository root), e.g. bench/scale-worker.
   */
  configuredWorkers?: { config: string; scriptPath: string }[];
  /** workerd's DevTools inspector on this port (bench/profile.ts takes CPU profiles through it); off by default. */
  inspectorPort?: number;
};

export type Stack = {
  /** `{base_url}`, e.g. http://127.0.0.1:8787 (no trailing slash). */
  baseUrl: string;
  /** `{embed_url}`, e.g. http://127.0.0.1:8788 (no trailing slash). */
  embedUrl: string;
  mf: Miniflare;
  /** The folder of its stores (D1, Durable Objects), when this stack chose it: `persistDir`, or the RAM folder of one that keeps nothing (`memoryRoot`). */
  storesDir: string | undefined;
  /** The workers' names from their wrangler.toml (Miniflare's worker names). */
  names: Record<WorkerKey, string>;
  /**
   * Fires the cron worker's `scheduled()` for one trigger (default: its first
   * configured cron) and waits for the jobs it dispatched; `jobs`: the runs
   * (a continuation is a run of its own), in the order they ended.
   */
  scheduled(cron?: string): Promise<{ outcome: string; noRetry: boolean; jobs?: string[] }>;
  dispose(): Promise<void>;
};

const LEVELS: Record<StackLogLevel, LogLevel> = {
  none: LogLevel.NONE,
  error: LogLevel.ERROR,
  warn: LogLevel.WARN,
  info: LogLevel.INFO,
  debug: LogLevel.DEBUG,
};

/** Mirrors the deploy routes: the embed worker takes `/v1/embed/*` on the api's host. */
const LOCAL_ROUTES: Partial<Record<WorkerKey, string[]>> = { embed: ["*/v1/embed/*"] };

const HOST = "127.0.0.1";

/**
 * Starts the four bundled workers in one Miniflare instance, wired as in
 * production: one D1 database, the rate limiters, the queues and the cron
 * triggers, all read from the workers' wrangler.toml so config and local
 * stack cannot drift. Applies the migrations before it returns.
 *
 * @example
 * const stack = await startStack({ port: 8787, embedPort: 8788, persistDir: ".data" });
 * await fetch(`${stack.baseUrl}/v1/health`);
 * await stack.dispose();
 */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const outDir = options.outDir ?? "dist";
  const built = options.build === false ? bundledWorkers(outDir) : (await buildWorkers(outDir)).workers;
  const level = LEVELS[options.logLevel ?? "error"];
  const configs = built.map((b) => ({ ...b, wrangler: readWranglerConfig(b.config) }));
  const names = Object.fromEntries(configs.map((c) => [c.key, c.wrangler.name])) as Record<WorkerKey, string>;
  const extras = (options.configuredWorkers ?? []).map((w) => ({ scriptPath: w.scriptPath, wrangler: readWranglerConfig(w.config) }));

  const memory = options.persistDir ? undefined : memoryRoot();
  const mf = new Miniflare({
    host: HOST,
    port: options.port ?? 0,
    log: new Log(level),
    logRequests: options.logRequests ?? false,
    // Offline: the placeholder `Request.cf` instead of fetching Cloudflare's.
    cf: false,
    telemetry: { enabled: false },
    ...(options.inspectorPort ? { inspectorPort: options.inspectorPort } : {}),
    ...(options.persistDir ? { defaultPersistRoot: resolve(REPO_ROOT, options.persistDir) } : memory ? { defaultPersistRoot: memory.path } : {}),
    handleRuntimeStdio: (stdout: Readable, stderr: Readable) => {
      pipeLines(stdout, level >= LogLevel.INFO ? (line) => console.log(line) : undefined);
      pipeLines(stderr, level >= LogLevel.ERROR ? (line) => console.error(line) : undefined);
    },
    workers: [
      ...configs.map(({ key, scriptPath, wrangler }) => ({
        ...workerOptions(wrangler, options),
        ...bundleModules(scriptPath),
        ...(LOCAL_ROUTES[key] ? { routes: LOCAL_ROUTES[key] } : {}),
        ...(key === "embed" ? { unsafeDirectSockets: [{ host: HOST, port: options.embedPort ?? 0 }] } : {}),
      })),
      ...extras.map(({ scriptPath, wrangler }) => ({ ...workerOptions(wrangler, options), ...bundleModules(scriptPath) })),
      ...(options.extraWorkers ?? []),
    ],
  });

  let cronTimer: ReturnType<typeof setInterval> | undefined;
  try {
    const baseUrl = trimSlash((await mf.ready).href);
    const embedUrl = trimSlash((await mf.unsafeGetDirectURL(names.embed)).href);
    await migrateD1((await mf.getD1Database("DB", names.api)) as unknown as D1Database, readMigrations());

    const crons = configs.find((c) => c.key === "cron")?.wrangler.triggers?.crons ?? [];
    let lastTick = 0;
    /**
     * Fires the trigger, whose handler only dispatches its jobs to the cron
     * worker's queue (workers/cron/dispatch.ts), then waits until each of
     * them (and any continuation) has run once, by asking the cron worker
     * (workers/cron/local-ticks.ts): so a tick still means its work is done,
     * as when the jobs ran inline. The outcome is "exception" if a job failed.
     */
    const scheduled = async (cron = crons[0] ?? "* * * * *") => {
      const worker = await mf.getWorker(names.cron);
      // Each tick its own time, even two in one millisecond: the time names the tick.
      lastTick = Math.max(Date.now(), lastTick + 1);
      const scheduledTime = lastTick;
      const dispatched = await worker.scheduled({ cron, scheduledTime: new Date(scheduledTime) });
      if (dispatched.outcome !== "ok") return dispatched;
      const url = `http://cron.local/__local/cron-tick?key=${encodeURIComponent(`${cron}@${scheduledTime}`)}`;
      for (const deadline = Date.now() + 600_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 20))) {
        const res = await worker.fetch(url);
        const tick = (await res.json()) as { pending: number; failed: string[]; ran: string[] };
        if (res.ok && tick.pending <= 0) return { outcome: tick.failed.length > 0 ? "exception" : "ok", noRetry: false, jobs: tick.ran };
      }
      throw new Error(`the cron tick ${cron}@${scheduledTime} did not finish its jobs within 10 minutes`);
    };

    let tick: Promise<unknown> | undefined;
    if (options.cronIntervalMs && options.cronIntervalMs > 0) {
      cronTimer = setInterval(() => {
        if (tick) return; // the previous tick is still running: skip rather than pile ticks up
        tick = Promise.all(crons.map((cron) => scheduled(cron)))
          .catch((err) => console.error(JSON.stringify({ level: "error", msg: "local cron tick failed", error: String(err) })))
          .finally(() => (tick = undefined));
      }, options.cronIntervalMs);
    }

    return {
      baseUrl,
      embedUrl,
      mf,
      storesDir: options.persistDir ? resolve(REPO_ROOT, options.persistDir) : memory?.path,
      names,
      scheduled,
      async dispose() {
        clearInterval(cronTimer);
        await tick;
        await mf.dispose();
        memory?.remove();
      },
    };
  } catch (err) {
    clearInterval(cronTimer);
    await mf.dispose();
    memory?.remove();
    throw err;
  }
}

/**
 * A folder in RAM (`/dev/shm`, a tmpfs) for a stack that keeps nothing, or
 * undefined where there is none (then Miniflare's own temporary folder).
 *
 * Miniflare's "in memory" stores are SQLite files (D1, and each Durable
 * Object's storage) in a temporary folder under `os.tmpdir()`, which is
 * usually a disk. workerd runs SQLite on its one thread, so each commit's
 * write to disk, and each WAL checkpoint's, stops every worker, object and
 * socket of the stack meanwhile: under the loan bench, requests waited up
 * to 1–4 s before the api worker got them, while the disk took 37 MB/s with
 * 6% I/O wait. In RAM those waits are gone (loans: p99 0.9–1.6 s → 0.27 s,
 * 66–72 → 84–90 loans/s on the same machine). The folder is removed on
 * dispose, and on exit if the process ends first; its name carries the
 * process id, so a later stack removes those of processes that are gone.
 */
function memoryRoot(): { path: string; remove: () => void } | undefined {
  const shm = "/dev/shm";
  try {
    accessSync(shm, constants.W_OK);
  } catch {
    return undefined;
  }
  // The stores of stacks whose process is gone (killed, so `exit` never ran: a `bun test --parallel` worker) are RAM.
  for (const name of readdirSync(shm)) {
    const pid = Number(/^svc-credit-stack-(\d+)-/.exec(name)?.[1]);
    if (pid && pid !== process.pid && !isAlive(pid)) rmSync(join(shm, name), { recursive: true, force: true });
  }
  const path = mkdtempSync(join(shm, `svc-credit-stack-${process.pid}-`));
  const remove = () => {
    rmSync(path, { recursive: true, force: true });
    process.off("exit", remove);
  };
  process.on("exit", remove);
  return { path, remove };
}

/** A worker's bindings and vars, from its wrangler.toml plus the local overrides. */
/**
 * A bundle as the one module it is. Given `scriptPath` with `modules: true`,
 * Miniflare parses the whole file (acorn, with locations) to find the
 * modules it imports; a wrangler bundle imports only the runtime's own
 * (`node:*`, `cloudflare:*`), so that parse finds nothing, and it cost
 * about 0.35 s of a stack's start per 1 MB of bundle (1.4 s for the four).
 * Listed, the file goes to workerd as it is, under the same name. A bundle
 * with modules beside it (a chunk, a .wasm) is left to Miniflare to find.
 */
export function bundleModules(scriptPath: string) {
  const beside = readdirSync(dirname(scriptPath)).filter((f) => join(dirname(scriptPath), f) !== scriptPath && /\.(m?js|cjs|wasm)$/.test(f));
  return beside.length === 0 ? { modules: [{ type: "ESModule" as const, path: scriptPath }] } : { scriptPath, modules: true as const };
}

function workerOptions(config: WranglerConfig, options: StackOptions): WorkerOptions {
  const ratelimits = Object.fromEntries((config.ratelimits ?? []).map((r) => [r.name, { simple: { ...r.simple, ...options.ratelimits?.[r.name] } }]));
  return {
    name: config.name,
    compatibilityDate: config.compatibility_date,
    compatibilityFlags: config.compatibility_flags ?? [],
    bindings: { ...localVars(config.vars), ENVIRONMENT: "development", ...options.vars },
    // Outbound requests (webhook deliveries, e-mail, chain RPC) go straight out, not through Miniflare's
    // extra worker that drops `CF-Connecting-IP` and adds `CF-Worker` (Cloudflare does that outside the
    // isolate): one isolate call less per delivery (bench/HISTORY.md).
    // Our workers never forward an incoming request, so no caller's `CF-Connecting-IP` can leave with one.
    stripCfConnectingIp: false,
    // Every worker names the same database id, so they all share one local database.
    d1Databases: Object.fromEntries((config.d1_databases ?? []).map((d) => [d.binding, d.database_id])),
    ratelimits,
    queueProducers: Object.fromEntries((config.queues?.producers ?? []).map((p) => [p.binding, { queueName: p.queue, deliveryDelay: p.delivery_delay }])),
    queueConsumers: Object.fromEntries(
      (config.queues?.consumers ?? []).map((c) => [
        c.queue,
        {
          maxBatchSize: c.max_batch_size,
          maxBatchTimeout: c.max_batch_timeout,
          maxRetries: c.max_retries,
          deadLetterQueue: c.dead_letter_queue,
          retryDelay: c.retry_delay,
        },
      ]),
    ),
    durableObjects: Object.fromEntries((config.durable_objects?.bindings ?? []).map((d) => [d.name, { className: d.class_name, scriptName: d.script_name }])),
    serviceBindings: Object.fromEntries(
      (config.services ?? []).map((s) => [s.binding, s.entrypoint ? { name: s.service, entrypoint: s.entrypoint } : s.service]),
    ),
  };
}

/**
 * A config's vars as the local stack runs them: without the deployment's own
 * host (`BASE_URL`, written by `npm run configure`), so links in local e-mail
 * point at the origin the request came to, whatever port Miniflare picked.
 */
function localVars(vars: Record<string, string> | undefined): Record<string, string> {
  const { BASE_URL: _deployed, ...local } = vars ?? {};
  return local;
}

function pipeLines(stream: Readable, write: ((line: string) => void) | undefined) {
  if (!write) {
    stream.resume(); // drain, or workerd blocks on a full pipe
    return;
  }
  createInterface(stream).on("line", write);
}

const trimSlash = (url: string) => url.replace(/\/$/, "");
