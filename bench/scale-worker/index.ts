import type { Logger } from "../../shared/observability/logger.ts";
import type { CronEnv } from "../../workers/cron/env.ts";
import type { CronJob } from "../../workers/cron/job.ts";
import { settlementListenerJob } from "../../workers/cron/jobs/settlement-listener.ts";
import { sweepLoansJob } from "../../workers/cron/jobs/sweep-loans.ts";
import { countingD1, type RoundTrip } from "./counting-d1.ts";
import { PROBE_ROUND_TRIPS, PROBES } from "./probes.ts";

/** The jobs this worker runs, one per request path. */
const JOBS: Record<string, CronJob> = { "/poll": settlementListenerJob, "/sweep": sweepLoansJob };

export type ScaleRun = {
  /** The job's own D1 round trips (its loan writers' run in the loan objects, not counted here). */
  roundTrips: number;
  /** Their time, summed (ms, as workerd's clock gives it: it moves across I/O). */
  d1Ms: number;
  /** Each round trip (`?trace`): its SQL and ms. */
  trace?: RoundTrip[];
  /** What the job logged (the listener logs a ledger with transactions; the sweep logs what it visited). */
  logs: { level: "info" | "error"; msg: string; fields?: Record<string, unknown> }[];
};

/**
 * Bench only (bench/scale.ts): `POST /poll` runs the settlement-listener job
 * once, `POST /sweep` the sweep job once, exactly as the cron worker's tick
 * runs them but alone, and answers what the job did. `POST /probe/read` and
 * `/probe/write` time D1 itself (a one-row read, a one-row write) in the same
 * database; any other path answers at once (the cost of the request itself).
 */
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const path = url.pathname;
    const probe = PROBES[path];
    if (probe) {
      for (let i = 0; i < PROBE_ROUND_TRIPS; i++) await env.DB.prepare(probe).run();
      return Response.json({ roundTrips: PROBE_ROUND_TRIPS, d1Ms: 0, logs: [] } satisfies ScaleRun);
    }
    const job = JOBS[path];
    if (!job) return Response.json({ roundTrips: 0, d1Ms: 0, logs: [] } satisfies ScaleRun);
    const { db, roundTrips } = countingD1(env.DB);
    const logs: ScaleRun["logs"] = [];
    const log: Logger = {
      info: (msg, fields) => logs.push({ level: "info", msg, ...(fields ? { fields } : {}) }),
      error: (msg, fields) => logs.push({ level: "error", msg, ...(fields ? { fields } : {}) }),
    };
    try {
      await job.run({ env: { ...env, DB: db }, cron: "* * * * *", scheduledTime: Date.now(), log });
    } catch (error) {
      logs.push({ level: "error", msg: error instanceof Error ? error.message : String(error) });
    }
    const trips = roundTrips();
    const run: ScaleRun = {
      roundTrips: trips.length,
      d1Ms: trips.reduce((sum, t) => sum + t.ms, 0),
      logs,
      ...(url.searchParams.has("trace") ? { trace: trips } : {}),
    };
    return Response.json(run, { status: logs.some((l) => l.level === "error") ? 500 : 200 });
  },
} satisfies ExportedHandler<CronEnv>;
