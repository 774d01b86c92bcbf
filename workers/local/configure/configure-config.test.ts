import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT, WORKERS, type WranglerConfig } from "../wrangler-config.ts";
import { configureConfig, databaseIdIn, resolveSettings } from "./configure-config.ts";

const ID = "3f1c2a9e-5b7d-4e21-9c3a-0d8e6f4b2a71";
const settings = { databaseId: ID, zone: "lendco.com" };
const configured = WORKERS.map(({ key, config }) => {
  const text = readFileSync(join(REPO_ROOT, config), "utf8");
  const out = configureConfig(text, key, settings);
  return { key, text, out, parsed: Bun.TOML.parse(out) as WranglerConfig & { routes?: unknown[]; workers_dev?: boolean } };
});
const of = (key: string) => configured.find((c) => c.key === key)!;

describe("npm run configure: one command writes a deployment into the four configs", () => {
  test("the created D1 database id goes into all four configs", () => {
    for (const c of configured) {
      expect(c.parsed.d1_databases?.map((d) => d.database_id)).toEqual([ID]);
      expect(c.text).toContain('database_id = "00000000-0000-0000-0000-000000000000"'); // the repository keeps the placeholder
    }
  });

  test("Custom Domains for the api and widget hosts, the embed route on the api host, EMBED_HOST and BASE_URL from the same settings", () => {
    expect(of("api").parsed.routes).toEqual([{ pattern: "api.lendco.com", custom_domain: true }]);
    expect(of("embed").parsed.routes).toEqual([
      { pattern: "api.lendco.com/v1/embed/*", zone_name: "lendco.com" },
      { pattern: "embed.lendco.com", custom_domain: true },
    ]);
    expect(of("api").parsed.vars?.EMBED_HOST).toBe("embed.lendco.com");
    expect(of("embed").parsed.vars?.EMBED_HOST).toBe("embed.lendco.com");
    expect(of("api").parsed.vars?.BASE_URL).toBe("https://api.lendco.com");
    expect((Bun.TOML.parse(of("api").text) as WranglerConfig).vars?.BASE_URL).toBeUndefined(); // the repository's: the request's origin
    expect(of("cron").parsed.routes).toBeUndefined();
    expect(of("webhooks").parsed.routes).toBeUndefined();
  });

  test("mail settings are vars of the config (a deploy replaces dashboard vars), with the sender in the zone", () => {
    for (const key of ["api", "webhooks"]) {
      expect(of(key).parsed.vars?.MAIL_FROM).toBe("svc credit <notifications@lendco.com>");
      expect(of(key).parsed.vars?.MAIL_API_URL).toMatch(/^https:\/\//);
    }
    const custom = Bun.TOML.parse(
      configureConfig(of("webhooks").text, "webhooks", { ...settings, mailApiUrl: "https://mail.lendco.com/send", mailFrom: "Lendco <no-reply@lendco.com>" }),
    ) as WranglerConfig;
    expect(custom.vars?.MAIL_API_URL).toBe("https://mail.lendco.com/send");
    expect(custom.vars?.MAIL_FROM).toBe("Lendco <no-reply@lendco.com>");
  });

  test("the public workers have no workers.dev URL; the rest of each config is untouched; running it twice changes nothing", () => {
    for (const c of configured) {
      expect(c.parsed.workers_dev).toBe(false);
      expect(configureConfig(c.out, c.key, settings)).toBe(c.out);
      const before = Bun.TOML.parse(c.text) as Record<string, unknown>;
      const after = c.parsed as unknown as Record<string, unknown>;
      for (const field of ["name", "main", "durable_objects", "queues", "ratelimits", "migrations", "triggers", "secrets", "placement"]) {
        expect({ field, value: after[field] }).toEqual({ field, value: before[field] });
      }
    }
  });

  test("bad settings are refused with what is wrong, and nothing is written", () => {
    const bad = resolveSettings({ databaseId: "not-an-id", zone: "lendco.com", apiHost: "api.other.com", embedHost: "api.other.com" });
    expect(bad.ok).toBe(false);
    const errors = bad.ok ? [] : bad.errors.join("\n");
    expect(errors).toContain("--database-id");
    expect(errors).toContain("api.other.com is not in the zone lendco.com");
    expect(errors).toContain("must differ");
    expect(resolveSettings({}).ok).toBe(false); // the zone is required
    expect(() => configureConfig(of("api").text, "api", { zone: "lendco.com", mailFrom: 'x" , evil = "1' })).toThrow(/--mail-from/);
  });

  test("the id is read from `wrangler d1 create`'s output", () => {
    expect(
      databaseIdIn(`✅ Successfully created DB 'svc-credit'\n\n[[d1_databases]]\nbinding = "DB"\ndatabase_name = "svc-credit"\ndatabase_id = "${ID}"\n`),
    ).toBe(ID);
    expect(
      databaseIdIn(`{\n  "d1_databases": [\n    {\n      "binding": "DB",\n      "database_name": "svc-credit",\n      "database_id": "${ID}"\n    }\n  ]\n}`),
    ).toBe(ID);
    expect(databaseIdIn("no id here")).toBeNull();
  });
});
