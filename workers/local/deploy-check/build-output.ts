import type { Problem, Verdict, WorkerFacts } from "./facts.ts";

/** Workers Paid: 10 MiB per Worker after gzip (Workers Free: 3 MiB). */
export const PAID_LIMIT_BYTES = 10 * 1024 * 1024;
export const FREE_LIMIT_BYTES = 3 * 1024 * 1024;

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes in wrangler's output.
const ANSI = /\u001b\[[0-9;]*m/g;

/**
 * Wrangler warnings this project accepts, each for a reason, matched against
 * one item of a "Processing … configuration:" warning (never a whole block:
 * any other item in the same block still fails).
 */
export const ACCEPTED_WARNINGS: { pattern: RegExp; reason: string }[] = [
  {
    pattern: /^- "secrets" fields are experimental and may change or break at any time\.$/,
    reason: "issue 17 declares each worker's required secrets in `[secrets] required`, which wrangler still calls experimental",
  },
];

/**
 * The warnings in `wrangler deploy --dry-run` output (wrangler's and
 * esbuild's `▲ [WARNING]` blocks: the heading and its indented lines),
 * without the items of ACCEPTED_WARNINGS; a block left with no item is no
 * warning.
 */
export function wranglerWarnings(output: string): string[] {
  return rawWarnings(output).flatMap((warning) => {
    const items = warning.split(/ (?=- )/);
    if (items.length === 1) return [warning];
    const [heading, ...rest] = items;
    const left = rest.filter((item) => !ACCEPTED_WARNINGS.some((a) => a.pattern.test(item.trim())));
    return left.length === 0 ? [] : [[heading, ...left].join(" ")];
  });
}

function rawWarnings(output: string): string[] {
  const lines = output.replace(ANSI, "").split("\n");
  const warnings: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.includes("[WARNING]")) continue;
    const block = [lines[i]!.replace(/^.*\[WARNING\]\s*/, "").trim()];
    for (let j = i + 1; j < lines.length && (lines[j]!.trim() === "" || /^\s/.test(lines[j]!)); j++) if (lines[j]!.trim()) block.push(lines[j]!.trim());
    warnings.push(block.join(" "));
  }
  return warnings;
}

/** Rule 7: the dry run (`npm run build`) printed no warning. */
export function dryRunWarningsRule(workers: WorkerFacts[], requireBuild: boolean): Verdict {
  const problems: Problem[] = [];
  const notes: string[] = [];
  for (const w of workers) {
    if (!w.build) {
      if (requireBuild)
        problems.push({ rule: "dry-run-warnings", file: `dist/${w.key}`, field: "wrangler-output.txt", message: "no build output: run `npm run build` first" });
      else notes.push(`dist/${w.key}: not built; dry-run warnings and bundle size not checked`);
      continue;
    }
    for (const warning of wranglerWarnings(w.build.output))
      problems.push({ rule: "dry-run-warnings", file: w.configPath, field: `wrangler deploy --dry-run`, message: warning });
  }
  return { problems, notes };
}

const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(2)} MiB`;

/** Rule 8: each bundle's gzip size against the Workers Paid limit (printed; above it fails). */
export function bundleSizeRule(workers: WorkerFacts[]): Verdict {
  const problems: Problem[] = [];
  const notes: string[] = [];
  for (const w of workers) {
    if (!w.build) continue;
    const { gzipBytes } = w.build;
    const share = ((100 * gzipBytes) / PAID_LIMIT_BYTES).toFixed(1);
    const free = gzipBytes > FREE_LIMIT_BYTES ? ", above the Free plan's 3 MiB" : "";
    notes.push(
      `${w.key.padEnd(8)} ${(gzipBytes / 1024).toFixed(1).padStart(8)} KiB gzipped: ${share}% of the Workers Paid limit (${mib(PAID_LIMIT_BYTES)})${free}`,
    );
    if (gzipBytes > PAID_LIMIT_BYTES)
      problems.push({
        rule: "bundle-size",
        file: `dist/${w.key}`,
        field: "index.js",
        message: `${mib(gzipBytes)} gzipped exceeds the Workers Paid limit of ${mib(PAID_LIMIT_BYTES)}`,
      });
  }
  return { problems, notes };
}
