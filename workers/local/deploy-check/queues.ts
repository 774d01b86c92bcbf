import { asArray, asRecord, type Problem, type Verdict, type WorkerFacts } from "./facts.ts";

type Producer = { binding: string; queue: string };
type Consumer = { queue: string; dead_letter_queue?: string };

const producersOf = (w: WorkerFacts) => asArray<Producer>(asRecord(w.config.queues).producers);
const consumersOf = (w: WorkerFacts) => asArray<Consumer>(asRecord(w.config.queues).consumers);

/**
 * Rule 5: every queue a worker produces to is consumed by exactly one worker,
 * and every consumer names a `dead_letter_queue` (without one, a message that
 * exhausts its retries is deleted). A dead-letter queue needs no consumer:
 * without one its messages are kept 4 days (Cloudflare's documented
 * retention); the output says so. The consumer of a dead-letter queue needs
 * no dead-letter queue of its own (the chain has to end somewhere): its
 * messages have already failed, and what it does with them is its own
 * (here: log the state in D1, which the recovery passes act on).
 */
export function queuesRule(workers: WorkerFacts[]): Verdict {
  const problems: Problem[] = [];
  const notes: string[] = [];
  const consumers = workers.flatMap((w) => consumersOf(w).map((c, i) => ({ w, c, field: `queues.consumers[${i}]` })));
  const produced = new Map<string, { w: WorkerFacts; field: string }[]>();
  for (const w of workers) {
    producersOf(w).forEach((p, i) => {
      const list = produced.get(p.queue) ?? [];
      list.push({ w, field: `queues.producers[${i}] (${p.binding})` });
      produced.set(p.queue, list);
    });
  }
  for (const [queue, producers] of produced) {
    const consuming = consumers.filter((c) => c.c.queue === queue);
    if (consuming.length === 0) {
      for (const p of producers)
        problems.push({ rule: "queues", file: p.w.configPath, field: p.field, message: `queue ${queue} is produced but no worker consumes it` });
    }
  }
  const consumedBy = new Map<string, string[]>();
  for (const { w, c } of consumers) consumedBy.set(c.queue, [...(consumedBy.get(c.queue) ?? []), w.configPath]);
  const deadLetterQueues = new Set(consumers.flatMap(({ c }) => (c.dead_letter_queue ? [c.dead_letter_queue] : [])));
  for (const { w, c, field } of consumers) {
    const by = consumedBy.get(c.queue) ?? [];
    if (by.length > 1)
      problems.push({
        rule: "queues",
        file: w.configPath,
        field: `${field}.queue`,
        message: `queue ${c.queue} is consumed by ${by.length} workers (${by.join(", ")}); exactly one may`,
      });
    if (!c.dead_letter_queue && deadLetterQueues.has(c.queue)) {
      notes.push(`${w.configPath}: ${c.queue} is a dead-letter queue; its consumer names none of its own`);
    } else if (!c.dead_letter_queue) {
      problems.push({
        rule: "queues",
        file: w.configPath,
        field: `${field}.dead_letter_queue`,
        message: `the consumer of ${c.queue} names no dead_letter_queue: a message that exhausts its retries is deleted`,
      });
    } else if (!consumedBy.has(c.dead_letter_queue)) {
      notes.push(
        `dead-letter queue ${c.dead_letter_queue} (of ${c.queue}) has no consumer: its messages wait there 4 days, then are deleted (create it with npx wrangler queues create ${c.dead_letter_queue})`,
      );
    }
    if (!produced.has(c.queue) && !deadLetterQueues.has(c.queue))
      notes.push(`${w.configPath}: queue ${c.queue} is consumed but no worker of this repository produces it`);
  }
  return { problems, notes };
}
