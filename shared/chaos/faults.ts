/**
 * Fault injection for the chaos suite (workers/local/chaos/) and its short
 * tests: a D1 binding that fails a fraction of statements, a Queue producer
 * that duplicates, delays (reorders) and loses messages, and a loan object
 * reset between its commit and its reply. Read from vars, and only when
 * ENVIRONMENT is "development": a production deployment never injects.
 */

/** A D1 statement (or batch) that failed on purpose. `retryable` as the platform's transient errors have it. */
export class InjectedFault extends Error {
  override name = "InjectedFault";
  readonly retryable = true;
  constructor(what: string) {
    super(`D1_ERROR: injected fault (chaos): ${what}`);
  }
}

/** Where a fault applies: the worker (or the loan objects) whose handles get it. */
export type FaultSite = "api" | "embed" | "cron" | "webhooks" | "loans";

export type D1FaultPolicy = {
  /** Only these sites' handles fail; unset: every site. */
  sites?: FaultSite[];
  /** Fraction of statements (a batch counts as one) that fail, 0..1. */
  rate: number;
  /**
   * "before": the statement does not run; "after": it runs (and commits) but
   * its answer is lost; "either" (default): half and half.
   */
  when?: "before" | "after" | "either";
  /** Only statements whose SQL matches this (case-insensitive regular expression) may fail. */
  match?: string;
  /** At most this many faults in all (per isolate); unset: no limit. */
  limit?: number;
  /**
   * Every statement after the first `cutAfter` of one database handle fails:
   * an invocation killed half-way (counted against `limit`, so later
   * invocations run whole once it is spent).
   */
  cutAfter?: number;
  seed?: number;
};

export type QueueFaultPolicy = {
  sites?: FaultSite[];
  /** Fraction of messages sent twice. */
  duplicate?: number;
  /** Fraction of messages silently dropped (the send succeeds, the message never arrives). */
  lose?: number;
  /** Each message is delayed by 0..this many seconds at random, so messages arrive out of order. */
  reorderSeconds?: number;
  seed?: number;
};

export type ChaosVars = { ENVIRONMENT?: string; CHAOS_D1?: string; CHAOS_QUEUE?: string; CHAOS_DO_RESET?: string };

export type ChaosConfig = { d1?: D1FaultPolicy; queue?: QueueFaultPolicy; doResetRate?: number };

/** The faults the vars ask for; none outside development or when no var is set. */
export function chaosFromEnv(env: ChaosVars): ChaosConfig {
  if (env.ENVIRONMENT !== "development") return {};
  const config: ChaosConfig = {};
  if (env.CHAOS_D1) config.d1 = JSON.parse(env.CHAOS_D1) as D1FaultPolicy;
  if (env.CHAOS_QUEUE) config.queue = JSON.parse(env.CHAOS_QUEUE) as QueueFaultPolicy;
  if (env.CHAOS_DO_RESET) config.doResetRate = Number(env.CHAOS_DO_RESET);
  return config;
}

/** A small seeded generator (mulberry32): the same seed gives the same faults. */
export function randomSource(seed: number = Date.now()): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
