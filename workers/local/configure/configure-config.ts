import type { WorkerKey } from "../wrangler-config.ts";

/** What `npm run configure` writes into the four wrangler configs. */
export type DeploySettings = {
  /** The D1 database's id, as `wrangler d1 create svc-credit` prints it. */
  databaseId?: string;
  /** The Cloudflare zone the hosts are in, e.g. `svc-credit.com`. */
  zone?: string;
  /** `{base_url}`'s host; default `api.<zone>`. */
  apiHost?: string;
  /** `{embed_url}`'s host (widget pages, TON Connect domain); default `embed.<zone>`. */
  embedHost?: string;
  /** The sender of account and notification e-mail; default `svc credit <notifications@<zone>>`. */
  mailFrom?: string;
  /** The mail provider's HTTP API (default: the configs' own). */
  mailApiUrl?: string;
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HOST = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i;

export type ResolvedSettings = { zone: string; apiHost: string; embedHost: string; mailFrom: string; databaseId?: string; mailApiUrl?: string };

/** The settings with their defaults filled in, or the list of what is wrong with them. */
export function resolveSettings(s: DeploySettings): { ok: true; value: ResolvedSettings } | { ok: false; errors: string[] } {
  const errors: string[] = [];
  if (s.databaseId !== undefined && !UUID.test(s.databaseId)) errors.push(`--database-id: not a D1 database id (a UUID): ${s.databaseId}`);
  if (!s.zone) errors.push("--zone: required (the Cloudflare zone of the api and embed hosts, e.g. svc-credit.com)");
  const zone = (s.zone ?? "").toLowerCase();
  if (zone && !HOST.test(zone)) errors.push(`--zone: not a domain: ${s.zone}`);
  const apiHost = (s.apiHost ?? `api.${zone}`).toLowerCase();
  const embedHost = (s.embedHost ?? `embed.${zone}`).toLowerCase();
  for (const [flag, host] of [
    ["--api-host", apiHost],
    ["--embed-host", embedHost],
  ] as const) {
    if (!HOST.test(host)) errors.push(`${flag}: not a host name: ${host}`);
    else if (zone && host !== zone && !host.endsWith(`.${zone}`)) errors.push(`${flag}: ${host} is not in the zone ${zone}`);
  }
  if (apiHost === embedHost) errors.push("--api-host and --embed-host must differ: the widget pages need a host of their own");
  if (s.mailApiUrl !== undefined && !/^https:\/\/\S+$/.test(s.mailApiUrl)) errors.push(`--mail-api-url: not an https URL: ${s.mailApiUrl}`);
  const mailFrom = s.mailFrom ?? `svc credit <notifications@${zone}>`;
  if (/["\n\\]/.test(mailFrom)) errors.push("--mail-from: no quotes, backslashes or newlines");
  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    value: { zone, apiHost, embedHost, mailFrom, ...(s.databaseId ? { databaseId: s.databaseId } : {}), ...(s.mailApiUrl ? { mailApiUrl: s.mailApiUrl } : {}) },
  };
}

type Route = { pattern: string; custom_domain?: true; zone_name?: string };

/**
 * The routes each public worker gets. The api and the widget host are
 * Custom Domains (Cloudflare creates their DNS records and certificates);
 * the embed worker's `/v1/embed/*` on the api host is a route, which takes
 * precedence over the api's Custom Domain on that host.
 */
export function routesOf(key: WorkerKey, s: { zone: string; apiHost: string; embedHost: string }): Route[] | null {
  if (key === "api") return [{ pattern: s.apiHost, custom_domain: true }];
  if (key === "embed")
    return [
      { pattern: `${s.apiHost}/v1/embed/*`, zone_name: s.zone },
      { pattern: s.embedHost, custom_domain: true },
    ];
  return null;
}

const tomlRoute = (r: Route) =>
  `  { pattern = "${r.pattern}"${r.custom_domain ? ", custom_domain = true" : ""}${r.zone_name ? `, zone_name = "${r.zone_name}"` : ""} },`;

/** `routes = [...]`, replacing the configs' commented template (`# routes = [` … `# ]`) or routes written before. */
function setRoutes(text: string, routes: Route[]): string {
  const block = `routes = [\n${routes.map(tomlRoute).join("\n")}\n]`;
  const written = /^routes = \[\n(?:.*\n)*?\]$/m;
  if (written.test(text)) return text.replace(written, block);
  const template = /^# routes = \[\n(?:#.*\n)*?# \]$/m;
  if (template.test(text)) return text.replace(template, block);
  throw new Error("no `routes` (or its commented template) before the first table");
}

/** `NAME = "value"` in `[vars]`, replacing the var (or its commented example) or adding it first in the table. */
function setVar(text: string, name: string, value: string): string {
  const line = `${name} = "${value}"`;
  const existing = new RegExp(`^(# ?)?${name} = ".*"$`, "m");
  if (existing.test(text)) return text.replace(existing, line);
  if (!/^\[vars\]$/m.test(text)) throw new Error("no [vars] table");
  return text.replace(/^\[vars\]$/m, `[vars]\n${line}`);
}

/** Every `database_id` (the one D1 database all four workers bind). */
function setDatabaseId(text: string, id: string): string {
  if (!/^database_id = "[^"]*"/m.test(text)) throw new Error("no database_id");
  return text.replace(/^database_id = "[^"]*"/gm, `database_id = "${id}"`);
}

/**
 * One worker's wrangler config with the deployment's settings written in:
 * the database id, the routes, `EMBED_HOST` (api and embed), `BASE_URL`
 * (api), the mail sender and provider (api and webhooks). Everything else,
 * comments included, is left as it is; running it again with the same
 * settings changes nothing.
 */
export function configureConfig(text: string, key: WorkerKey, settings: DeploySettings): string {
  const resolved = resolveSettings(settings);
  if (!resolved.ok) throw new Error(resolved.errors.join("\n"));
  const s = resolved.value;
  let out = text;
  if (s.databaseId) out = setDatabaseId(out, s.databaseId);
  const routes = routesOf(key, s);
  if (routes) out = setRoutes(out, routes);
  if (key === "api" || key === "embed") out = setVar(out, "EMBED_HOST", s.embedHost);
  if (key === "api") out = setVar(out, "BASE_URL", `https://${s.apiHost}`);
  if (key === "api" || key === "webhooks") {
    out = setVar(out, "MAIL_FROM", s.mailFrom);
    if (s.mailApiUrl) out = setVar(out, "MAIL_API_URL", s.mailApiUrl);
  }
  return out;
}

/** The first D1 database id in `wrangler d1 create`'s output (it prints a config snippet with `"database_id": "…"` or `database_id = "…"`). */
export function databaseIdIn(output: string): string | null {
  return /database_id"?\s*[=:]\s*"([0-9a-f-]{36})"/i.exec(output)?.[1] ?? null;
}
