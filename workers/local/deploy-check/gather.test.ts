import { expect, test } from "bun:test";
import { checkDeploy } from "./check.ts";
import { gatherFacts } from "./gather.ts";

// Gathers the real facts once (wrangler types ×4 and the TypeScript compiler: seconds), without `npm run build`'s output.
const facts = gatherFacts("/nonexistent-dist");

test("the repository's four wrangler configs pass every rule", async () => {
  const f = await facts;
  const verdict = checkDeploy(f, { requireBuild: false });
  expect(verdict.problems).toEqual([]);
  const api = f.workers.find((w) => w.key === "api")!;
  expect(api.durableObjectClasses).toEqual(["AgreementChallengeObject", "EvmSenderObject", "LoanObject", "SimulatedChainObject"]);
  expect(api.env?.typeName).toBe("ApiEnv");
  expect(api.env?.file).toBe("workers/api/deps.ts");
  // Intersections are read: LiveChainEnv's keys are ApiEnv properties.
  expect(api.env?.properties.find((p) => p.name === "POLYGON_RPC_URL")).toEqual({ name: "POLYGON_RPC_URL", optional: true });
  expect(api.generatedEnv).toContain("LOANS");
  expect(api.generatedEnv).toContain("JWT_TTL_SECONDS");
  expect(f.jobs.length).toBeGreaterThan(0);
}, 120_000);

test("without its dead-letter queue the webhooks consumer fails the check (as main's config did)", async () => {
  const f = await facts;
  const webhooks = f.workers.find((w) => w.key === "webhooks")!;
  const queues = webhooks.config.queues as { consumers: { dead_letter_queue?: string }[] };
  const workers = f.workers.map((w) =>
    w === webhooks ? { ...w, config: { ...w.config, queues: { ...queues, consumers: queues.consumers.map(({ dead_letter_queue: _, ...c }) => c) } } } : w,
  );
  const { problems } = checkDeploy({ ...f, workers }, { requireBuild: false });
  // The deliveries consumer; and the consumer of what was its dead-letter queue, now nobody's, with none of its own either.
  expect(problems.map((p) => `${p.rule} ${p.file} ${p.field}`)).toEqual([
    "queues workers/webhooks/wrangler.toml queues.consumers[0].dead_letter_queue",
    "queues workers/webhooks/wrangler.toml queues.consumers[1].dead_letter_queue",
  ]);
}, 120_000);
