import { asArray, asRecord, type JobFacts, type Problem, type Verdict, type WorkerFacts } from "./facts.ts";

const normalize = (cron: string): string => cron.trim().split(/\s+/).join(" ");

/**
 * Rule 6: every cron expression a job runs on is one of the cron worker's
 * `triggers.crons` (else the job never runs), and every trigger runs some job
 * (else the platform wakes the worker for nothing).
 */
export function cronsRule(workers: WorkerFacts[], cronWorker: string, jobs: JobFacts[]): Verdict {
  const w = workers.find((x) => x.key === cronWorker);
  if (!w) return { problems: [{ rule: "crons", file: "(none)", field: cronWorker, message: `no worker ${cronWorker} to hold the cron triggers` }], notes: [] };
  const problems: Problem[] = [];
  const triggers = asArray<string>(asRecord(w.config.triggers).crons).map(normalize);
  const matched = new Set<string>();
  for (const job of jobs) {
    for (const cron of job.crons.map(normalize)) {
      matched.add(cron);
      if (!triggers.includes(cron))
        problems.push({
          rule: "crons",
          file: w.configPath,
          field: "triggers.crons",
          message: `job ${job.name} runs on "${cron}", which is not a trigger: it never runs`,
        });
    }
  }
  triggers.forEach((cron, i) => {
    if (!matched.has(cron))
      problems.push({ rule: "crons", file: w.configPath, field: `triggers.crons[${i}]`, message: `trigger "${cron}" runs no job (workers/cron/jobs.ts)` });
  });
  return { problems, notes: [] };
}
