import { startTestStack, type TestStack } from "../integration.ts";
import { merchantWithEndpoints } from "./load.ts";
import { startReceiver, type Behaviour, type Receiver } from "./receiver.ts";
import { type ReportRow, rowOf } from "./report.ts";
import { advancePastDue, awaitSwept, type Load, runLoad } from "./scenario.ts";
import { awaitDelivered, verify } from "./verify.ts";

/** The workers' settings every case runs with: 2 s delivery timeout (a 7 s lease), retries after 1 s and 2 s. */
export const CHAOS_VARS = { WEBHOOK_TIMEOUT_MS: "2000", WEBHOOK_RETRY_DELAYS_SECONDS: "1,2", EMAIL_RETRY_DELAYS_SECONDS: "1,2" };

/** The stack's rate limits out of the way: the suite measures faults, not 429s. */
const UNLIMITED = Object.fromEntries(
  ["IP_LIMITER", "API_KEY_LIMITER", "TENANT_LIMITER", "SIGNUP_LIMITER", "LOGIN_LIMITER", "AUTH_FAILURE_LIMITER", "EMBED_LIMITER", "EMBED_MISS_LIMITER"].map(
    (n) => [n, { limit: 1_000_000 }],
  ),
);

/** How long the suite waits for every committed event to arrive after the load (then counts what is missing). */
const SETTLE_MS = 60_000;

export type CaseOptions = {
  load: Load;
  /** The delivery timeout and retry delays, over CHAOS_VARS' (the short suite in `npm test` uses 1 s and 1 s, 1 s). */
  timeouts?: { timeoutMs: number; retryDelays: string };
};

/** The workers' vars of a case: CHAOS_VARS, its timeouts, then its faults. */
const varsOf = (o: CaseOptions, faults: Record<string, string> = {}) => ({
  ...CHAOS_VARS,
  ...(o.timeouts ? { WEBHOOK_TIMEOUT_MS: String(o.timeouts.timeoutMs), WEBHOOK_RETRY_DELAYS_SECONDS: o.timeouts.retryDelays } : {}),
  ...faults,
});

const describeLoad = (load: Load, repaid: number, events: number) => `${load.loans} loans by ${load.clients} clients, ${repaid} repaid, ${events} events`;

/**
 * One fault on an in-process stack (cron every 500 ms): a merchant with the
 * receiver's endpoints, the load, then (optionally) the sandbox clock moved
 * past due so the sweep runs under the fault too; verified through the API.
 */
async function inProcessCase(
  fault: string,
  options: CaseOptions & {
    vars?: Record<string, string>;
    endpoints?: Record<string, Behaviour>;
    failing?: string[];
    sweep?: boolean;
    /** How long to wait for every event to arrive after the load (default 60 s). */
    settleMs?: number;
    /** Runs beside the load (e.g. extra overlapping cron ticks) until it resolves. */
    alongside?: (stack: TestStack, done: () => boolean) => Promise<void>;
  },
): Promise<ReportRow> {
  const t0 = Date.now();
  const mark = (what: string) => process.env.CHAOS_DEBUG && console.error(`${fault}: ${what} at ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const receiver = await startReceiver();
  const stack = await startTestStack({ cronIntervalMs: 500, vars: varsOf(options, options.vars), ratelimits: UNLIMITED });
  mark("stack up");
  try {
    const endpoints = options.endpoints ?? { "/ok": { kind: "ok" } };
    const m = await merchantWithEndpoints(
      stack.baseUrl,
      Object.entries(endpoints).map(([path, b]) => receiver.endpoint(path, b)),
    );
    mark("merchant");
    let finished = false;
    const beside = options.alongside?.(stack, () => finished);
    const started = Date.now();
    const result = await runLoad(m, options.load);
    let unswept = 0;
    if (options.sweep) {
      await advancePastDue(m);
      unswept = await awaitSwept(m, result.ids.values(), result.repaid);
    }
    finished = true;
    await beside;
    const loadMs = Date.now() - started;
    mark("load done");
    const okPaths = Object.keys(endpoints).filter((p) => !(options.failing ?? []).includes(p));
    await awaitDelivered(m, receiver, okPaths, options.settleMs ?? SETTLE_MS);
    mark("quiet");
    const findings = await verify(m, receiver, { loans: result.ids, repaid: result.repaid, deliveredTo: okPaths, failingTo: options.failing });
    mark("verified");
    if (process.env.CHAOS_DEBUG) {
      for (const path of Object.keys(endpoints)) {
        const codes: Record<string, number> = {};
        for (const a of receiver.arrivals(path)) codes[a.answered] = (codes[a.answered] ?? 0) + 1;
        console.error(path, receiver.delivered(path).size, JSON.stringify(codes));
      }
    }
    const row = rowOf(
      fault,
      describeLoad(options.load, result.repaid.size, findings.eventsCommitted),
      findings,
      (e) => Date.parse(e.createdAt),
      unswept ? `${unswept} loans not swept` : undefined,
    );
    if (unswept) row.ok = false;
    row.notes = [row.notes, `load took ${(loadMs / 1000).toFixed(1)} s`].filter(Boolean).join("; ");
    return row;
  } finally {
    await stack.dispose();
    await receiver.close();
  }
}

/** A loan object reset after its D1 commit and before its reply (30% of commands). */
export const doReset = (o: CaseOptions) => inProcessCase("Loan object reset between commit and reply (30%)", { ...o, vars: { CHAOS_DO_RESET: "0.3" } });

/** D1 fails 5% of statements, before they run or after they commit, in every worker and the loan objects, through creation, funding, repayment (listener) and the sweep. */
export const d1Faults = (o: CaseOptions) =>
  inProcessCase("D1 fails 5% of statements (before or after commit)", { ...o, sweep: true, vars: { CHAOS_D1: JSON.stringify({ rate: 0.05, seed: 7 }) } });

/** Queue messages duplicated (20%), lost (10%) and delayed up to 2 s (out of order). */
export const queueFaults = (o: CaseOptions) =>
  inProcessCase("Queue: 20% duplicated, 10% lost, reordered", {
    ...o,
    vars: { CHAOS_QUEUE: JSON.stringify({ duplicate: 0.2, lose: 0.1, reorderSeconds: 2, seed: 11 }) },
  });

/**
 * Receivers that time out, reset, answer 500 (each once per event, then
 * succeed), are slow, or always answer 410 or a redirect. Every event goes to
 * 7 endpoints and each failed delivery makes a `webhook.delivery_failed` for
 * the other 6, so the work is about 20 deliveries per event: it gets 4
 * minutes to settle.
 */
export const badReceivers = (o: CaseOptions) =>
  inProcessCase("Receivers: timeout, reset, 500, slow; 410 and 302 forever", {
    ...o,
    settleMs: 240_000,
    endpoints: {
      "/ok": { kind: "ok" },
      // Slow but well inside the timeout, even on a loaded machine.
      "/slow": { kind: "slow", ms: 0.4 * (o.timeouts?.timeoutMs ?? Number(CHAOS_VARS.WEBHOOK_TIMEOUT_MS)) },
      "/error500": { kind: "error500", failFirst: 1 },
      "/timeout": { kind: "timeout", failFirst: 1 },
      "/reset": { kind: "reset", failFirst: 1 },
      "/gone": { kind: "gone" },
      "/redirect": { kind: "redirect" },
    },
    failing: ["/gone", "/redirect"],
  });

/** Four cron ticks at once, every 300 ms, through the load and the sweep. */
export const overlappingCron = (o: CaseOptions) =>
  inProcessCase("Cron ticks overlapping (4 at once)", {
    ...o,
    sweep: true,
    alongside: async (stack, done) => {
      while (!done()) {
        await Promise.all([1, 2, 3, 4].map(() => stack.scheduled().catch(() => undefined)));
        await Bun.sleep(300);
      }
    },
  });

/** Cron jobs cut off after 12 statements each (an invocation killed half-way), until 300 statements have been refused. */
export const cronKilledHalfway = (o: CaseOptions) =>
  inProcessCase("Cron tick killed half-way", { ...o, sweep: true, vars: { CHAOS_D1: JSON.stringify({ cutAfter: 12, limit: 300, sites: ["cron"] }) } });

/** The settlement listener's cursor write fails (before or after committing) after the repayments were credited, 20 times. */
export const listenerCrash = (o: CaseOptions) =>
  inProcessCase("Listener crash between credit and cursor", {
    ...o,
    load: { ...o.load, repayEvery: 1 },
    vars: { CHAOS_D1: JSON.stringify({ rate: 1, match: 'insert into "sandbox_ledgers"', limit: 20, seed: 3 }) },
  });

export type { Receiver };
