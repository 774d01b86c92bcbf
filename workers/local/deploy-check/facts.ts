import type { EnvProperty } from "./typescript-facts.ts";

/** The rules a deploy check enforces (issue 17 item 6); each problem names one. */
export type RuleId =
  | "schema"
  | "do-migrations"
  | "migration-tags"
  | "do-script-name"
  | "env-bindings"
  | "queues"
  | "crons"
  | "dry-run-warnings"
  | "bundle-size";

/** A broken rule: which, in which file, at which field, and why. */
export type Problem = { rule: RuleId; file: string; field: string; message: string };

/** A rule's verdict: problems fail the check, notes are printed for the reader. */
export type Verdict = { problems: Problem[]; notes: string[] };

/** A wrangler config as TOML parsed it (validated against wrangler's schema by the schema rule, so read defensively). */
export type Config = Record<string, unknown>;

/** One `[[migrations]]` entry (the fields the rules read). */
export type Migration = {
  tag?: string;
  new_classes?: string[];
  new_sqlite_classes?: string[];
  renamed_classes?: { from: string; to: string }[];
  deleted_classes?: string[];
  transferred_classes?: { from: string; from_script: string; to: string }[];
};

/** Everything the rules know about one worker, gathered by the entry (deploy-check.ts). */
export type WorkerFacts = {
  key: string;
  /** The config's path relative to the repository root (problems name it). */
  configPath: string;
  config: Config;
  /** Classes extending DurableObject that the entry module exports. */
  durableObjectClasses: string[];
  /** The hand-written Env type (`satisfies ExportedHandler<Env>` in the entry); null: none found. */
  env: { typeName: string; file: string; properties: EnvProperty[] } | null;
  /** Binding, var and required-secret names of the Env that `wrangler types` generated for this config. */
  generatedEnv: string[];
  /** The config's `[[migrations]]` at the previous commit; null: not comparable (no git, no previous commit, or a new file). */
  previousMigrations: Migration[] | null;
  /** `wrangler deploy --dry-run`'s output and the bundle's gzip size, from `npm run build`; null: not built. */
  build: { output: string; gzipBytes: number } | null;
};

/** One cron job as workers/cron/jobs.ts declares it. */
export type JobFacts = { name: string; crons: readonly string[] };

export type DeployFacts = {
  workers: WorkerFacts[];
  /** The worker whose `triggers.crons` run `jobs`. */
  cronWorker: string;
  jobs: JobFacts[];
  /**
   * Per worker, Env properties a deploy may leave unset (optional-settings.ts):
   * they need no binding, var or `secrets.required` entry, but must be optional (`?`) in the Env type.
   */
  optionalSettings: Record<string, readonly string[]>;
  /** The schema `wrangler` ships (node_modules/wrangler/config-schema.json). */
  schema: JsonSchema;
};

/** The JSON Schema subset wrangler's config-schema.json uses. */
export type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  required?: string[];
  items?: JsonSchema | JsonSchema[];
  anyOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  definitions?: Record<string, JsonSchema>;
};

export const asArray = <T>(value: unknown): T[] => (Array.isArray(value) ? (value as T[]) : []);
export const asRecord = (value: unknown): Record<string, unknown> =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
