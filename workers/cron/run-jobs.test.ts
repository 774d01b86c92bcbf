import { expect, test } from "bun:test";
import type { Logger } from "../../shared/observability/logger.ts";
import type { CronEnv } from "./env.ts";
import type { CronJob } from "./job.ts";
import { runJobs } from "./run-jobs.ts";

const lines: string[] = [];
const log: Logger = { info: (m) => lines.push(`info ${m}`), error: (m, f) => lines.push(`error ${m} ${JSON.stringify(f)}`) };

test("runs the jobs of the trigger's cron; one failing does not stop the others but fails the run", async () => {
  const ran: string[] = [];
  const job = (name: string, crons: string[], fail = false): CronJob => ({
    name,
    crons,
    async run() {
      ran.push(name);
      if (fail) throw new Error(`${name} broke`);
    },
  });
  const jobs = [job("a", ["* * * * *"]), job("b", ["* * * * *"], true), job("c", ["* * * * *"]), job("hourly", ["0 * * * *"])];
  await expect(runJobs(jobs, {} as CronEnv, { cron: "* * * * *", scheduledTime: 0 }, log)).rejects.toThrow("cron jobs failed: b");
  expect(ran.sort()).toEqual(["a", "b", "c"]);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toStartWith('error cron job failed {"job":"b","cron":"* * * * *","name":"Error","error":"b broke"');
});

test("a trigger with no due jobs succeeds", async () => {
  await runJobs([], {} as CronEnv, { cron: "* * * * *", scheduledTime: 0 }, log);
});
