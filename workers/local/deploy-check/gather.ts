import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { OFFLINE_ENV } from "../build.ts";
import { REPO_ROOT, WORKERS } from "../wrangler-config.ts";
import type { Config, DeployFacts, JobFacts, JsonSchema, Migration, WorkerFacts } from "./facts.ts";
import { OPTIONAL_SETTINGS } from "./optional-settings.ts";
import { generatedEnvNames, readEntryFacts } from "./typescript-facts.ts";

/** The files `npm run build` leaves beside a bundle that are not uploaded. */
const NOT_UPLOADED = (file: string): boolean => file.endsWith(".map") || file.endsWith(".txt") || file === "README.md";

async function run(cmd: string[], cwd: string, env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(cmd, { cwd, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/**
 * `wrangler types` for one config, offline, into `dir`. It reads a JSON copy
 * of the config written into `dir`, with `main` made absolute and `[build]`
 * left out: `wrangler types` would otherwise run the build command, and would
 * read secrets' names from a developer's `.dev.vars` beside the real config.
 */
async function wranglerTypes(config: Config, configPath: string, dir: string): Promise<string[]> {
  const { build: _build, ...rest } = config;
  await mkdir(dir, { recursive: true });
  const copy = join(dir, "wrangler.json");
  await writeFile(copy, JSON.stringify({ ...rest, main: resolve(REPO_ROOT, dirname(configPath), String(config.main)) }));
  const out = join(dir, "worker-configuration.d.ts");
  const { code, stdout, stderr } = await run(
    [join(REPO_ROOT, "node_modules", ".bin", "wrangler"), "types", out, "--include-runtime=false", "-c", copy],
    dir,
    OFFLINE_ENV,
  );
  if (code !== 0) throw new Error(`wrangler types for ${configPath} failed (exit ${code}):\n${stdout}\n${stderr}`);
  return generatedEnvNames(readFileSync(out, "utf8"));
}

/** The config's `[[migrations]]` at HEAD~1; null when git, that commit, or the file there is missing. */
async function previousMigrations(configPath: string): Promise<Migration[] | null> {
  try {
    const { code, stdout } = await run(["git", "show", `HEAD~1:${configPath}`], REPO_ROOT);
    if (code !== 0) return null;
    const parsed = Bun.TOML.parse(stdout) as Config;
    return Array.isArray(parsed.migrations) ? (parsed.migrations as Migration[]) : [];
  } catch {
    return null;
  }
}

function buildOutput(distDir: string, key: string): WorkerFacts["build"] {
  const dir = join(distDir, key);
  const outputFile = join(dir, "wrangler-output.txt");
  if (!existsSync(outputFile)) return null;
  const uploaded = readdirSync(dir).filter((f) => !NOT_UPLOADED(f));
  const gzipBytes = uploaded.reduce((sum, f) => sum + Bun.gzipSync(readFileSync(join(dir, f))).length, 0);
  return { output: readFileSync(outputFile, "utf8"), gzipBytes };
}

/**
 * Everything the rules need, read from the repository: the four configs,
 * `wrangler types` per config (in parallel, while the TypeScript compiler
 * reads the entries' exports and Env types), the previous commit's
 * migrations, the cron jobs, and `npm run build`'s output in `distDir`.
 */
export async function gatherFacts(distDir = join(REPO_ROOT, "dist")): Promise<DeployFacts> {
  const configs = WORKERS.map(({ key, config }) => ({
    key,
    configPath: config,
    config: Bun.TOML.parse(readFileSync(join(REPO_ROOT, config), "utf8")) as Config,
  }));
  const temp = await mkdtemp(join(tmpdir(), "deploy-check-"));
  try {
    const generated = Promise.all(configs.map((c) => wranglerTypes(c.config, c.configPath, join(temp, c.key))));
    const previous = Promise.all(configs.map((c) => previousMigrations(c.configPath)));
    const jobs = import("../../cron/jobs.ts").then(({ JOBS }): JobFacts[] => JOBS.map((j) => ({ name: j.name, crons: j.crons })));
    // Synchronous (seconds): runs while wrangler works in its own processes.
    const entries = configs.map((c) => resolve(REPO_ROOT, dirname(c.configPath), String(c.config.main)));
    const entryFacts = readEntryFacts(entries, join(REPO_ROOT, "tsconfig.json"), (file) => file.replace(`${REPO_ROOT}/`, ""));
    const [generatedEnv, previousTags, cronJobs] = await Promise.all([generated, previous, jobs]);
    const workers: WorkerFacts[] = configs.map((c, i) => {
      const entry = entryFacts.get(entries[i]!)!;
      return {
        ...c,
        durableObjectClasses: entry.durableObjectClasses,
        env: entry.env,
        generatedEnv: generatedEnv[i]!,
        previousMigrations: previousTags[i]!,
        build: buildOutput(distDir, c.key),
      };
    });
    const schema = JSON.parse(readFileSync(join(REPO_ROOT, "node_modules", "wrangler", "config-schema.json"), "utf8")) as JsonSchema;
    return { workers, cronWorker: "cron", jobs: cronJobs, optionalSettings: OPTIONAL_SETTINGS, schema };
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}
