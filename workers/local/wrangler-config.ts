import { readFileSync } from "node:fs";
import { join } from "node:path";

/** The repository root (workers/local/ is two levels down). */
export const REPO_ROOT = join(import.meta.dir, "..", "..");

/**
 * The four workers, in the local stack's order: the api comes first because
 * Miniflare sends every request that matches no route to the first worker,
 * as Cloudflare sends the host's traffic to the api's `host/*` route.
 */
export const WORKERS = [
  { key: "api", config: "wrangler.toml" },
  { key: "embed", config: "workers/embed/wrangler.toml" },
  { key: "cron", config: "workers/cron/wrangler.toml" },
  { key: "webhooks", config: "workers/webhooks/wrangler.toml" },
] as const;

export type WorkerKey = (typeof WORKERS)[number]["key"];

/** The parts of a wrangler.toml the local stack maps onto Miniflare. */
export type WranglerConfig = {
  name: string;
  main: string;
  compatibility_date: string;
  compatibility_flags?: string[];
  vars?: Record<string, string>;
  d1_databases?: { binding: string; database_name: string; database_id: string }[];
  ratelimits?: { name: string; namespace_id: string; simple: { limit: number; period: 10 | 60 } }[];
  queues?: {
    producers?: { binding: string; queue: string; delivery_delay?: number }[];
    consumers?: {
      queue: string;
      max_batch_size?: number;
      max_batch_timeout?: number;
      max_retries?: number;
      dead_letter_queue?: string;
      retry_delay?: number;
      max_concurrency?: number;
    }[];
  };
  durable_objects?: { bindings?: { name: string; class_name: string; script_name?: string }[] };
  services?: { binding: string; service: string; entrypoint?: string }[];
  triggers?: { crons?: string[] };
  /** Secrets a deployment must have (each worker checks them: shared/config/required-secrets.ts); locally every one has a development default. */
  secrets?: { required?: string[] };
};

/**
 * Binding kinds that workers/local/stack.ts does not map yet. A config that
 * gains one fails loudly here, rather than a worker finding `env.X` undefined
 * at run time. (Build and deploy settings such as `minify` or `limits` pass.)
 */
const UNMAPPED_BINDING_KINDS = [
  "kv_namespaces",
  "r2_buckets",
  "workflows",
  "send_email",
  "vectorize",
  "hyperdrive",
  "analytics_engine_datasets",
  "browser",
  "ai",
  "images",
  "media",
  "stream",
  "version_metadata",
  "unsafe",
  "mtls_certificates",
  "tail_consumers",
  "streaming_tail_consumers",
  "dispatch_namespaces",
  "pipelines",
  "secrets_store_secrets",
  "worker_loaders",
  "vpc_services",
  "vpc_networks",
  "wasm_modules",
  "text_blobs",
  "data_blobs",
  "assets",
  "containers",
];

/** Reads and checks one worker's wrangler.toml (path relative to the repository root). */
export function readWranglerConfig(configPath: string): WranglerConfig {
  const absolute = join(REPO_ROOT, configPath);
  const parsed = Bun.TOML.parse(readFileSync(absolute, "utf8")) as Record<string, unknown>;
  const unmapped = UNMAPPED_BINDING_KINDS.filter((kind) => kind in parsed);
  if (unmapped.length > 0) {
    throw new Error(`${configPath}: the local stack does not map ${unmapped.join(", ")} yet (workers/local/stack.ts)`);
  }
  return parsed as WranglerConfig;
}
