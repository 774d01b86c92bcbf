import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../wrangler-config.ts";
import { PAID_LIMIT_BYTES, wranglerWarnings } from "./build-output.ts";
import { checkDeploy } from "./check.ts";
import type { Config, DeployFacts, JsonSchema, Problem, RuleId, Verdict, WorkerFacts } from "./facts.ts";

const schema = JSON.parse(readFileSync(join(REPO_ROOT, "node_modules", "wrangler", "config-schema.json"), "utf8")) as JsonSchema;

const props = (...names: string[]) => names.map((n) => ({ name: n.replace("?", ""), optional: n.endsWith("?") }));

/** A host worker (a Durable Object class, a producer), a cron worker binding the class by script_name, and the queue's consumer. */
function fixture(): DeployFacts {
  const host: WorkerFacts = {
    key: "host",
    configPath: "host/wrangler.toml",
    config: {
      name: "svc-host",
      main: "index.ts",
      compatibility_date: "2025-09-01",
      vars: { MODE: "production" },
      durable_objects: { bindings: [{ name: "THINGS", class_name: "Thing" }] },
      migrations: [{ tag: "v1", new_sqlite_classes: ["Thing"] }],
      queues: { producers: [{ binding: "JOBS", queue: "jobs" }] },
    },
    durableObjectClasses: ["Thing"],
    env: { typeName: "HostEnv", file: "host/env.ts", properties: props("THINGS", "JOBS", "MODE?", "TOKEN?") },
    generatedEnv: ["JOBS", "MODE", "THINGS"],
    previousMigrations: [{ tag: "v1", new_sqlite_classes: ["Thing"] }],
    build: { output: "Total Upload: 10.00 KiB / gzip: 3.00 KiB\n--dry-run: exiting now.\n", gzipBytes: 3072 },
  };
  const cron: WorkerFacts = {
    key: "cron",
    configPath: "cron/wrangler.toml",
    config: {
      name: "svc-cron",
      main: "index.ts",
      compatibility_date: "2025-09-01",
      triggers: { crons: ["* * * * *"] },
      durable_objects: { bindings: [{ name: "THINGS", class_name: "Thing", script_name: "svc-host" }] },
    },
    durableObjectClasses: [],
    env: { typeName: "CronEnv", file: "cron/env.ts", properties: props("THINGS") },
    generatedEnv: ["THINGS"],
    previousMigrations: [],
    build: { output: "", gzipBytes: 1024 },
  };
  const consumer: WorkerFacts = {
    key: "consumer",
    configPath: "consumer/wrangler.toml",
    config: {
      name: "svc-consumer",
      main: "index.ts",
      compatibility_date: "2025-09-01",
      queues: { consumers: [{ queue: "jobs", max_retries: 3, dead_letter_queue: "jobs-dlq" }] },
    },
    durableObjectClasses: [],
    env: { typeName: "ConsumerEnv", file: "consumer/env.ts", properties: [] },
    generatedEnv: [],
    previousMigrations: [],
    build: { output: "", gzipBytes: 1024 },
  };
  return { workers: [host, cron, consumer], cronWorker: "cron", jobs: [{ name: "tick", crons: ["* * * * *"] }], optionalSettings: { host: ["TOKEN"] }, schema };
}

const worker = (facts: DeployFacts, key: string): WorkerFacts => facts.workers.find((w) => w.key === key)!;
const config = (facts: DeployFacts, key: string): Config => worker(facts, key).config;
const check = (facts: DeployFacts): Verdict => checkDeploy(facts, { requireBuild: true });

/** The check fails with exactly the expected problems' rule; this one names the file, field and reason. */
function expectProblem(verdict: Verdict, rule: RuleId, file: string, field: string, message: string): Problem {
  const found = verdict.problems.find((p) => p.rule === rule && p.file === file && p.field.includes(field) && p.message.includes(message));
  if (!found) throw new Error(`no [${rule}] ${file} ${field}: …${message}… in\n${JSON.stringify(verdict.problems, null, 2)}`);
  expect(verdict.problems.every((p) => p.rule === rule)).toBe(true);
  return found;
}

describe("the deploy check over fixture configs", () => {
  test("the fixture passes, and says its dead-letter queue has no consumer", () => {
    const verdict = check(fixture());
    expect(verdict.problems).toEqual([]);
    expect(verdict.notes.some((n) => n.includes("dead-letter queue jobs-dlq") && n.includes("no consumer"))).toBe(true);
    expect(verdict.notes.some((n) => n.startsWith("host ") && n.includes("KiB gzipped"))).toBe(true);
  });

  test("schema: an unknown key and a wrongly typed field", () => {
    const facts = fixture();
    Object.assign(config(facts, "host"), { bogus_key: 1, workers_dev: "no" });
    const verdict = check(facts);
    expectProblem(verdict, "schema", "host/wrangler.toml", "bogus_key", "unknown key");
    expectProblem(verdict, "schema", "host/wrangler.toml", "workers_dev", "must be boolean");
  });

  test("schema: an unknown key inside a queue consumer", () => {
    const facts = fixture();
    Object.assign((config(facts, "consumer").queues as { consumers: object[] }).consumers[0]!, { dead_letter: "x" });
    expectProblem(check(facts), "schema", "consumer/wrangler.toml", "queues.consumers[0].dead_letter", "unknown key");
  });

  test("do-migrations: an exported Durable Object class without a migration", () => {
    const facts = fixture();
    worker(facts, "host").durableObjectClasses.push("Other");
    expectProblem(check(facts), "do-migrations", "host/wrangler.toml", "migrations", "class Other");
  });

  test("do-migrations: a renamed class counts under its new name", () => {
    const facts = fixture();
    const host = worker(facts, "host");
    host.durableObjectClasses = ["Renamed"];
    (host.config.durable_objects as { bindings: { class_name: string }[] }).bindings[0]!.class_name = "Renamed";
    (host.config.migrations as object[]).push({ tag: "v2", renamed_classes: [{ from: "Thing", to: "Renamed" }] });
    (config(facts, "cron").durable_objects as { bindings: { class_name: string }[] }).bindings[0]!.class_name = "Renamed";
    expect(check(facts).problems).toEqual([]);
  });

  test("migration-tags: a removed tag", () => {
    const facts = fixture();
    worker(facts, "host").previousMigrations = [
      { tag: "v1", new_sqlite_classes: ["Thing"] },
      { tag: "v2", new_sqlite_classes: ["Gone"] },
    ];
    expectProblem(check(facts), "migration-tags", "host/wrangler.toml", "migrations[1]", "tag v2 was removed");
  });

  test("migration-tags: an edited tag and a reordered one", () => {
    const facts = fixture();
    const host = worker(facts, "host");
    host.previousMigrations = [{ tag: "v1", new_sqlite_classes: ["Thing", "Old"] }];
    expectProblem(check(facts), "migration-tags", "host/wrangler.toml", "migrations[0]", "tag v1 was edited");
    host.previousMigrations = [{ tag: "v0" }, { tag: "v1", new_sqlite_classes: ["Thing"] }];
    host.config.migrations = [{ tag: "v1", new_sqlite_classes: ["Thing"] }, { tag: "v0" }];
    expectProblem(check(facts), "migration-tags", "host/wrangler.toml", "migrations[0]", "tag v0 moved from position 0 to 1");
  });

  test("migration-tags: appending a tag passes; no previous commit is a note", () => {
    const facts = fixture();
    const host = worker(facts, "host");
    host.durableObjectClasses.push("Other");
    (host.config.migrations as object[]).push({ tag: "v2", new_sqlite_classes: ["Other"] });
    expect(check(facts).problems).toEqual([]);
    host.previousMigrations = null;
    const verdict = check(facts);
    expect(verdict.problems).toEqual([]);
    expect(verdict.notes).toContain("host/wrangler.toml: no previous commit to compare [[migrations]] with; tags not checked");
  });

  test("do-script-name: script_name pointing at a worker without the class", () => {
    const facts = fixture();
    (config(facts, "cron").durable_objects as { bindings: { class_name: string }[] }).bindings[0]!.class_name = "Missing";
    const verdict = check(facts);
    expectProblem(verdict, "do-script-name", "cron/wrangler.toml", "durable_objects.bindings[0] (THINGS)", "declares no binding of class Missing");
    expectProblem(verdict, "do-script-name", "cron/wrangler.toml", "durable_objects.bindings[0] (THINGS)", "has no migration for class Missing");
  });

  test("do-script-name: script_name naming no worker, and a local binding of a class the worker does not export", () => {
    const facts = fixture();
    (config(facts, "cron").durable_objects as { bindings: { script_name?: string }[] }).bindings[0]!.script_name = "svc-nowhere";
    expectProblem(check(facts), "do-script-name", "cron/wrangler.toml", "THINGS", "script_name svc-nowhere names no worker");
    const facts2 = fixture();
    delete (config(facts2, "cron").durable_objects as { bindings: { script_name?: string }[] }).bindings[0]!.script_name;
    expectProblem(check(facts2), "do-script-name", "cron/wrangler.toml", "THINGS", "does not export it");
  });

  test("env-bindings: a binding the code uses that the config does not declare", () => {
    const facts = fixture();
    worker(facts, "host").env!.properties.push({ name: "CACHE", optional: false });
    expectProblem(check(facts), "env-bindings", "host/env.ts", "HostEnv.CACHE", "not declared in host/wrangler.toml");
  });

  test("env-bindings: a declared binding absent from the Env type", () => {
    const facts = fixture();
    worker(facts, "host").generatedEnv.push("LIMITER");
    expectProblem(check(facts), "env-bindings", "host/wrangler.toml", "LIMITER", "absent from HostEnv (host/env.ts)");
  });

  test("env-bindings: an optional setting must be optional in the type; a listed setting the type lacks is stale", () => {
    const facts = fixture();
    worker(facts, "host").env!.properties = props("THINGS", "JOBS", "MODE?", "TOKEN");
    expectProblem(check(facts), "env-bindings", "host/env.ts", "HostEnv.TOKEN", "must be optional");
    const facts2 = fixture();
    facts2.optionalSettings.host = ["TOKEN", "NOT_READ"];
    expectProblem(check(facts2), "env-bindings", "workers/local/deploy-check/optional-settings.ts", "host.NOT_READ", "not a property of HostEnv");
  });

  test("env-bindings: secrets.required names count as declared (and a listed optional setting so declared is a note)", () => {
    const facts = fixture();
    const host = worker(facts, "host");
    host.env!.properties.push({ name: "JWT_SECRET", optional: false });
    host.config.secrets = { required: ["JWT_SECRET", "TOKEN"] };
    const verdict = check(facts);
    expect(verdict.problems).toEqual([]);
    expect(verdict.notes.some((n) => n.includes("optional setting TOKEN is now declared"))).toBe(true);
    // A required secret the code does not read is a declared binding absent from the type.
    host.config.secrets = { required: ["JWT_SECRET", "UNUSED_SECRET"] };
    expectProblem(check(facts), "env-bindings", "host/wrangler.toml", "UNUSED_SECRET", "absent from HostEnv");
  });

  test("queues: a consumer without a dead-letter queue", () => {
    const facts = fixture();
    delete (config(facts, "consumer").queues as { consumers: { dead_letter_queue?: string }[] }).consumers[0]!.dead_letter_queue;
    expectProblem(check(facts), "queues", "consumer/wrangler.toml", "queues.consumers[0].dead_letter_queue", "names no dead_letter_queue");
  });

  test("queues: the consumer of a dead-letter queue needs none of its own; any other consumer without one still fails", () => {
    const facts = fixture();
    (config(facts, "consumer").queues as { consumers: object[] }).consumers.push({ queue: "jobs-dlq", max_retries: 5 });
    const verdict = check(facts);
    expect(verdict.problems).toEqual([]);
    expect(verdict.notes.some((n) => n.includes("jobs-dlq is a dead-letter queue"))).toBe(true);
    (config(facts, "consumer").queues as { consumers: object[] }).consumers.push({ queue: "other", max_retries: 5 });
    expectProblem(check(facts), "queues", "consumer/wrangler.toml", "queues.consumers[2].dead_letter_queue", "names no dead_letter_queue");
  });

  test("queues: a produced queue without a consumer, and a queue with two", () => {
    const facts = fixture();
    facts.workers = facts.workers.filter((w) => w.key !== "consumer");
    expectProblem(check(facts), "queues", "host/wrangler.toml", "queues.producers[0] (JOBS)", "queue jobs is produced but no worker consumes it");
    const facts2 = fixture();
    config(facts2, "cron").queues = { consumers: [{ queue: "jobs", dead_letter_queue: "jobs-dlq" }] };
    expectProblem(check(facts2), "queues", "cron/wrangler.toml", "queues.consumers[0].queue", "consumed by 2 workers");
  });

  test("crons: a job's expression with no trigger, and a trigger with no job", () => {
    const facts = fixture();
    facts.jobs = [{ name: "tick", crons: ["*/5 * * * *"] }];
    const verdict = check(facts);
    expectProblem(verdict, "crons", "cron/wrangler.toml", "triggers.crons", 'job tick runs on "*/5 * * * *", which is not a trigger');
    expectProblem(verdict, "crons", "cron/wrangler.toml", "triggers.crons[0]", 'trigger "* * * * *" runs no job');
  });

  test("dry-run-warnings: any wrangler warning in the build's output fails; a missing build output too", () => {
    const facts = fixture();
    worker(facts, "host").build!.output =
      '\u001b[33m▲ \u001b[43;33m[\u001b[43;30mWARNING\u001b[43;33m]\u001b[0m \u001b[1mProcessing wrangler.toml configuration:\u001b[0m\n\n    - Unexpected fields found in top-level field: "bogus_key"\n\nTotal Upload: 1 KiB\n';
    expectProblem(
      check(facts),
      "dry-run-warnings",
      "host/wrangler.toml",
      "--dry-run",
      'Processing wrangler.toml configuration: - Unexpected fields found in top-level field: "bogus_key"',
    );
    const facts2 = fixture();
    worker(facts2, "cron").build = null;
    expectProblem(check(facts2), "dry-run-warnings", "dist/cron", "wrangler-output.txt", "run `npm run build` first");
    expect(checkDeploy(facts2, { requireBuild: false }).problems).toEqual([]);
  });

  test("dry-run-warnings: only the accepted item (the experimental `secrets` field) is let through, never another item of its block", () => {
    const block = (items: string[]) =>
      `\u001b[33m▲ \u001b[43;33m[\u001b[43;30mWARNING\u001b[43;33m]\u001b[0m \u001b[1mProcessing wrangler.toml configuration:\u001b[0m\n\n${items.map((i) => `    - ${i}\n`).join("")}\nTotal Upload: 1 KiB\n`;
    const secrets = '"secrets" fields are experimental and may change or break at any time.';
    expect(wranglerWarnings(block([secrets]))).toEqual([]);
    expect(wranglerWarnings(block([secrets, 'Unexpected fields found in top-level field: "bogus_key"']))).toEqual([
      'Processing wrangler.toml configuration: - Unexpected fields found in top-level field: "bogus_key"',
    ]);
    expect(wranglerWarnings(block(['"containers" fields are experimental and may change or break at any time.']))).toHaveLength(1);
  });

  test("wranglerWarnings reads esbuild's warnings too, and nothing from a clean build", () => {
    const esbuild =
      '▲ [WARNING] Duplicate key "a" in object literal [duplicate-object-key]\n\n    index.ts:1:13:\n      1 │ const o = { a: 1, a: 2 };\n\nTotal Upload: 1 KiB\n';
    expect(wranglerWarnings(esbuild)).toEqual(['Duplicate key "a" in object literal [duplicate-object-key] index.ts:1:13: 1 │ const o = { a: 1, a: 2 };']);
    expect(wranglerWarnings("Total Upload: 1112.87 KiB / gzip: 195.30 KiB\n--dry-run: exiting now.\n")).toEqual([]);
  });

  test("bundle-size: above the Workers Paid limit fails", () => {
    const facts = fixture();
    worker(facts, "host").build!.gzipBytes = PAID_LIMIT_BYTES + 1;
    expectProblem(check(facts), "bundle-size", "dist/host", "index.js", "exceeds the Workers Paid limit of 10.00 MiB");
    worker(facts, "host").build!.gzipBytes = PAID_LIMIT_BYTES;
    expect(check(facts).problems).toEqual([]);
  });
});
