import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { configureConfig, databaseIdIn, resolveSettings } from "./configure/configure-config.ts";
import { REPO_ROOT, WORKERS } from "./wrangler-config.ts";

/**
 * `npm run configure -- --zone <zone> [--database-id <id>] [--api-host h] [--embed-host h] [--mail-from "…"] [--mail-api-url URL]`:
 * writes a deployment's settings into the four wrangler configs at once
 * (workers/local/configure/configure-config.ts says what goes where).
 * `--database-id -` reads the id from `wrangler d1 create`'s output on stdin:
 *
 *   npx wrangler d1 create svc-credit | npm run configure -- --zone svc-credit.com --database-id -
 */
const { values } = parseArgs({
  options: {
    zone: { type: "string" },
    "database-id": { type: "string" },
    "api-host": { type: "string" },
    "embed-host": { type: "string" },
    "mail-from": { type: "string" },
    "mail-api-url": { type: "string" },
  },
});

let databaseId = values["database-id"];
if (databaseId === "-") {
  const input = await new Response(Bun.stdin.stream()).text();
  databaseId = databaseIdIn(input) ?? undefined;
  if (!databaseId) {
    console.error("no database_id in the input (pipe `npx wrangler d1 create svc-credit` into this)");
    process.exit(1);
  }
}
const settings = {
  zone: values.zone,
  databaseId,
  apiHost: values["api-host"],
  embedHost: values["embed-host"],
  mailFrom: values["mail-from"],
  mailApiUrl: values["mail-api-url"],
};
const resolved = resolveSettings(settings);
if (!resolved.ok) {
  for (const e of resolved.errors) console.error(e);
  process.exit(1);
}
for (const { key, config } of WORKERS) {
  const path = join(REPO_ROOT, config);
  const before = readFileSync(path, "utf8");
  const after = configureConfig(before, key, settings);
  // Written only when it still parses: a config this cannot edit cleanly is left alone.
  Bun.TOML.parse(after);
  if (after !== before) writeFileSync(path, after);
  console.log(`${after === before ? "unchanged" : "configured"} ${config}`);
}
const s = resolved.value;
console.log(`api https://${s.apiHost}, widget https://${s.embedHost}${s.databaseId ? `, D1 ${s.databaseId}` : " (database_id unchanged)"}`);
