import { expect, test } from "bun:test";
import type { Logger } from "../../shared/observability/logger.ts";
import { MAX_CONTINUATIONS } from "./budget.ts";
import { consumeCronDeadLetters, consumeCronJobs } from "./consume-jobs.ts";
import type { CronJobMessage } from "./cron-messages.ts";
import { dispatchJobs } from "./dispatch.ts";
import type { CronEnv } from "./env.ts";
import type { CronJob, JobResult } from "./job.ts";
import { JOBS } from "./jobs.ts";
import { localTickResponse, tickDispatched, tickKey } from "./local-ticks.ts";

const EVERY_MINUTE = "* * * * *";
const lines: string[] = [];
const log: Logger = { info: (m) => lines.push(`info ${m}`), error: (m) => lines.push(`error ${m}`) };

/** A jobs queue that keeps what is sent; `run` delivers each message in a batch of its own, as max_batch_size = 1 does. */
function jobsQueue() {
  const sent: CronJobMessage[] = [];
  const settled: { job: string; how: string }[] = [];
  const queue = {
    send: async (body: CronJobMessage) => void sent.push(body),
    sendBatch: async (messages: { body: CronJobMessage }[]) => void sent.push(...messages.map((m) => m.body)),
  };
  const env = { ENVIRONMENT: "development", CRON_JOBS: queue } as unknown as CronEnv;
  async function run(jobs: readonly CronJob[]) {
    while (sent.length > 0) {
      const body = sent.shift()!;
      const message = {
        id: crypto.randomUUID(),
        timestamp: new Date(),
        body,
        attempts: 1,
        ack: () => settled.push({ job: `${body.job}#${body.continuation}`, how: "ack" }),
        retry: (o?: { delaySeconds?: number }) => settled.push({ job: `${body.job}#${body.continuation}`, how: `retry ${o?.delaySeconds}` }),
      };
      await consumeCronJobs({ queue: "svc-credit-cron-jobs", messages: [message] } as unknown as MessageBatch<CronJobMessage>, env, jobs, log);
    }
  }
  return { queue, env, sent, settled, run };
}

test("the scheduled handler dispatches one message per job of its cron, and nothing else", async () => {
  const q = jobsQueue();
  const ran: string[] = [];
  const jobs: CronJob[] = ["a", "b"].map((name) => ({ name, crons: [EVERY_MINUTE], run: async () => void ran.push(name) }));
  jobs.push({ name: "hourly", crons: ["0 * * * *"], run: async () => void ran.push("hourly") });
  expect(await dispatchJobs(jobs, q.queue, { cron: EVERY_MINUTE, scheduledTime: 1_000 })).toEqual(["a", "b"]);
  expect(ran).toEqual([]);
  expect(q.sent).toEqual([
    { job: "a", cron: EVERY_MINUTE, scheduledTime: 1_000, continuation: 0 },
    { job: "b", cron: EVERY_MINUTE, scheduledTime: 1_000, continuation: 0 },
  ]);
  await q.run(jobs);
  expect(ran).toEqual(["a", "b"]);
});

test("every registered job is dispatched each minute, the relay and recovery after the jobs that write events", async () => {
  const q = jobsQueue();
  const names = await dispatchJobs(JOBS, q.queue, { cron: EVERY_MINUTE, scheduledTime: 0 });
  expect(names).toEqual([
    "heartbeat",
    "settlement-listener",
    "live-settlement-listener",
    "sweep-loans",
    "retry-funding",
    "gas-alerts",
    "relay-outbox",
    "recover-deliveries",
    "retention",
  ]);
});

test("a job that stops at its cap is continued, at most MAX_CONTINUATIONS times per tick; a failing job is retried by the Queue and stops no other", async () => {
  const q = jobsQueue();
  const runs: string[] = [];
  const jobs: CronJob[] = [
    {
      name: "backlog",
      crons: [EVERY_MINUTE],
      async run({ continuation }): Promise<JobResult> {
        runs.push(`backlog#${continuation}`);
        return { more: true };
      },
    },
    {
      name: "broken",
      crons: [EVERY_MINUTE],
      async run() {
        throw new Error("broke");
      },
    },
    { name: "fine", crons: [EVERY_MINUTE], run: async () => void runs.push("fine") },
  ];
  const key = tickKey(EVERY_MINUTE, 42);
  tickDispatched(key, (await dispatchJobs(jobs, q.queue, { cron: EVERY_MINUTE, scheduledTime: 42 })).length);
  await q.run(jobs);
  expect(runs).toEqual(["backlog#0", "fine", ...Array.from({ length: MAX_CONTINUATIONS }, (_, i) => `backlog#${i + 1}`)]);
  expect(q.settled).toContainEqual({ job: "broken#0", how: "retry 30" });
  expect(lines).toContain("info cron job left work for the next tick");
  // The local stack's view of the tick: every run done, the failure named.
  const state: any = await localTickResponse(new Request(`http://cron.local/__local/cron-tick?key=${encodeURIComponent(key)}`))!.json();
  expect(state.pending).toBe(0);
  expect(state.failed).toEqual(["broken"]);
  expect(state.ran).toHaveLength(3 + MAX_CONTINUATIONS);
});

test("an unknown job (sent by an older version) is acknowledged, not retried; dead letters are logged and acknowledged", async () => {
  const q = jobsQueue();
  await q.queue.send({ job: "retired", cron: EVERY_MINUTE, scheduledTime: 1, continuation: 0 });
  await q.run(JOBS);
  expect(q.settled).toEqual([{ job: "retired#0", how: "ack" }]);
  const acked: string[] = [];
  consumeCronDeadLetters(
    {
      queue: "svc-credit-cron-jobs-dlq",
      messages: [{ id: "m1", body: { job: "sweep-loans", cron: EVERY_MINUTE, scheduledTime: 1, continuation: 0 }, ack: () => acked.push("m1") }],
    } as unknown as MessageBatch<CronJobMessage>,
    log,
  );
  expect(acked).toEqual(["m1"]);
  expect(lines).toContain("error cron job dead-lettered");
});
