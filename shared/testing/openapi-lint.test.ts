import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Glob } from "bun";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { z } from "@hono/zod-openapi";
import { ROUTES } from "../../workers/api/routes.ts";
import { createEmbedTestApp } from "../../workers/embed/testing/harness.ts";
import { createTestApp, type TestApp } from "./harness.ts";

/**
 * The two OpenAPI documents as a merchant's tools see them (issue 11): every
 * operation has an operationId (`<resource>.<verb>`, unique across both
 * documents), explicit security, a declared tag; both carry `servers` (the
 * origin they were fetched from); the main request bodies have examples valid
 * for their schemas; and `redocly lint` (recommended rules, redocly.yaml)
 * reports no error and no warning, without reaching the network.
 */

const ROOT = resolve(import.meta.dir, "../..");
const API_ORIGIN = "https://api.svc-credit.test";
const EMBED_ORIGIN = "https://embed.svc-credit.test";
const OPERATION_ID = /^[a-z][A-Za-z]*(\.[a-z][A-Za-z]*)+$/;
const METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"];
/** Operations with no client error to document (redocly.yaml turns operation-4xx-response off for them; every other is checked here). */
const NO_4XX = new Set(["health.get", "embed.health", "embed.widgetScript"]);
/** The main request bodies, which must carry an example. */
const WITH_EXAMPLE = [
  "auth.signup",
  "auth.login",
  "apiKeys.create",
  "loans.create",
  "webhooks.create",
  "policies.put",
  "merchantConfigs.create",
  "settings.put",
  "widgetPrograms.create",
  "embed.quote",
  "embed.accept",
  "embed.eligibility",
  "embed.creditLine.bootstrap",
  "embed.walletSession.challenge",
  "embed.walletSession.open",
  "goLive.submitKyb",
  "operator.tenants.decideKyb",
  "operator.tenants.recordCommercialTerms",
  "operator.tenants.installSigner",
];

type Operation = {
  operationId?: string;
  security?: unknown[];
  tags?: string[];
  responses: Record<string, unknown>;
  requestBody?: { content: Record<string, { example?: unknown }> };
};
type Doc = { servers?: { url: string }[]; tags?: { name: string; description?: string }[]; paths: Record<string, Record<string, Operation>> };
type Located = { doc: "api" | "embed"; method: string; path: string; op: Operation };

let t: TestApp;
let api: Doc;
let embed: Doc;
let operations: Located[];
beforeAll(async () => {
  t = await createTestApp();
  const e = createEmbedTestApp(t);
  // Fetched at full URLs, as a tool would: `servers` is the origin the document came from.
  api = (await (await t.app.request(`${API_ORIGIN}/v1/openapi.json`, {}, {} as never)).json()) as Doc;
  embed = (await (await e.app.request(`${EMBED_ORIGIN}/openapi.json`, {}, {} as never)).json()) as Doc;
  operations = (["api", "embed"] as const).flatMap((name) =>
    Object.entries((name === "api" ? api : embed).paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => METHODS.includes(method))
        .map(([method, op]) => ({ doc: name, method, path, op })),
    ),
  );
});
afterAll(() => t.close());

const where = (o: Located) => `${o.doc}: ${o.method.toUpperCase()} ${o.path}`;

describe("nullable schemas", () => {
  test("no allOf holds a null type: a nullable registered schema rendered that way accepts no null (both parts must hold), so a null answer would not validate", () => {
    const found: string[] = [];
    const walk = (node: unknown, path: string) => {
      if (!node || typeof node !== "object") return;
      const allOf = (node as { allOf?: unknown }).allOf;
      if (Array.isArray(allOf) && allOf.some((part) => JSON.stringify(part).includes('"null"'))) found.push(path);
      for (const [key, value] of Object.entries(node)) walk(value, `${path}.${key}`);
    };
    walk(api, "api");
    walk(embed, "embed");
    expect(found).toEqual([]);
  });
});

describe("operationIds", () => {
  test("every operation of both documents has one, of the form <resource>.<verb>, unique across both", () => {
    expect(operations.length).toBeGreaterThan(60);
    const missing = operations.filter((o) => !o.op.operationId).map(where);
    expect(missing).toEqual([]);
    const malformed = operations.filter((o) => !OPERATION_ID.test(o.op.operationId!)).map((o) => `${where(o)}: ${o.op.operationId}`);
    expect(malformed).toEqual([]);
    const seen = new Map<string, string>();
    const duplicates: string[] = [];
    for (const o of operations) {
      const id = o.op.operationId!;
      if (seen.has(id)) duplicates.push(`${id}: ${seen.get(id)} and ${where(o)}`);
      seen.set(id, where(o));
    }
    expect(duplicates).toEqual([]);
    // The embed document's are namespaced, so a client generated from both never mixes them up.
    expect(operations.filter((o) => o.doc === "embed" && !o.op.operationId!.startsWith("embed.")).map(where)).toEqual([]);
    expect(operations.filter((o) => o.doc === "api" && o.op.operationId!.startsWith("embed.")).map(where)).toEqual([]);
  });

  test("they are written in the route declarations, not derived from paths", () => {
    // The names the README and generated clients use.
    const byId = new Map(operations.map((o) => [o.op.operationId!, `${o.method.toUpperCase()} ${o.path}`]));
    expect(byId.get("loans.create")).toBe("POST /v1/loans");
    expect(byId.get("loans.get")).toBe("GET /v1/loans/{id}");
    expect(byId.get("webhooks.deliveries.list")).toBe("GET /v1/webhooks/deliveries");
    expect(byId.get("embed.quote")).toBe("POST /v1/embed/{embedKey}/quote");
    expect(byId.get("embed.widgetPage")).toBe("GET /embed/{embedKey}");
    for (const { route } of ROUTES) expect(route.operationId, route.path).toMatch(OPERATION_ID);
  });
});

describe("servers, security, tags, errors", () => {
  test("the api document's server is the origin it was fetched from", () => {
    expect(api.servers?.map((s) => s.url)).toEqual([API_ORIGIN]);
  });

  test("the embed document serves every path on {embed_url}; /v1/embed/* also on {base_url}", () => {
    expect(embed.servers?.map((s) => s.url)).toEqual([EMBED_ORIGIN]);
    for (const o of operations.filter((x) => x.doc === "embed")) {
      const servers = (o.op as { servers?: { url: string; variables?: Record<string, { default: string }> }[] }).servers;
      if (o.path.startsWith("/v1/embed/")) {
        expect(
          servers?.map((s) => s.url),
          where(o),
        ).toEqual([EMBED_ORIGIN, "{base_url}"]);
        expect(servers?.[1]?.variables?.base_url?.default).toBe(EMBED_ORIGIN);
      } else expect(servers, where(o)).toBeUndefined();
    }
  });

  test("every operation states its security; every embed operation is public ([])", () => {
    expect(operations.filter((o) => !Array.isArray(o.op.security)).map(where)).toEqual([]);
    expect(operations.filter((o) => o.doc === "embed" && o.op.security!.length !== 0).map(where)).toEqual([]);
    // Public api routes (signup, login, health…) say so explicitly too.
    expect(operations.find((o) => o.op.operationId === "auth.signup")?.op.security).toEqual([]);
  });

  test("every tag used is declared at the top level with a description", () => {
    for (const doc of [api, embed]) {
      const declared = new Map((doc.tags ?? []).map((tag) => [tag.name, tag.description]));
      for (const [, description] of declared) expect(description?.length).toBeGreaterThan(10);
      const used = new Set(Object.values(doc.paths).flatMap((item) => Object.values(item).flatMap((op) => op.tags ?? [])));
      expect([...used].filter((tag) => !declared.has(tag))).toEqual([]);
    }
    expect(operations.filter((o) => !o.op.tags?.length).map(where)).toEqual([]);
  });

  test("every operation but the liveness probes and the launcher script documents a 4xx", () => {
    const without = operations.filter((o) => !Object.keys(o.op.responses).some((s) => s.startsWith("4"))).map((o) => o.op.operationId);
    expect(without.sort()).toEqual([...NO_4XX].sort());
  });
});

describe("money", () => {
  test("how a percentage fee is rounded is said where fees are configured, shown and quoted (half up to the cent)", () => {
    const schemas = (doc: Doc) =>
      (doc as Doc & { components?: { schemas?: Record<string, { properties?: Record<string, { description?: string }> }> } }).components?.schemas ?? {};
    expect(schemas(api).FeeInput?.properties?.value?.description).toContain("rounded half up to the cent");
    expect(schemas(api).Loan?.properties?.processingFee?.description).toContain("rounded half up to the cent");
    expect(schemas(api).Loan?.properties?.dailyLateFee?.description).toContain("rounded half up to the cent");
    expect(JSON.stringify(embed)).toContain("PERCENTAGE of the amount rounded half up to the cent");
  });
});

describe("request-body examples", () => {
  test("the main request bodies carry one", () => {
    const byId = new Map(operations.map((o) => [o.op.operationId!, o.op]));
    for (const id of WITH_EXAMPLE) expect(byId.get(id)?.requestBody?.content["application/json"]?.example, id).toBeDefined();
  });

  test("each example is valid for its route's schema (refinements included, which redocly cannot see)", async () => {
    const embedRoutes: { route: { path: string; request?: unknown } }[] = [];
    for await (const file of new Glob("workers/embed/routes/**/*.ts").scan(ROOT)) {
      if (file.endsWith(".test.ts")) continue;
      const mod = await import(join(ROOT, file));
      if (mod.route) embedRoutes.push(mod);
    }
    let checked = 0;
    for (const { route } of [...ROUTES, ...embedRoutes] as {
      route: { path: string; request?: { body?: { content: Record<string, { schema: z.ZodType; example?: unknown }> } } };
    }[]) {
      const media = route.request?.body?.content["application/json"];
      if (media?.example === undefined) continue;
      const parsed = media.schema.safeParse(media.example);
      expect(parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`), route.path).toEqual([]);
      checked++;
    }
    expect(checked).toBe(WITH_EXAMPLE.length);
  });
});

describe("redocly lint --extends recommended (redocly.yaml)", () => {
  test("both documents: no error, no warning; nothing leaves the machine", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-openapi-"));
    try {
      writeFileSync(join(dir, "api.json"), JSON.stringify(api, null, 2));
      writeFileSync(join(dir, "embed.json"), JSON.stringify(embed, null, 2));
      const results = await Promise.all(["api.json", "embed.json"].map((file) => redoclyLint(join(dir, file))));
      for (const r of results) {
        const problems = r.problems.map((p) => `${r.file}: ${p.severity} ${p.ruleId} ${p.message} at ${p.location.map((l) => l.pointer).join(", ")}`);
        expect(problems).toEqual([]);
        expect(r.totals).toEqual({ errors: 0, warnings: 0, ignored: 0 });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});

type LintReport = {
  file: string;
  totals: { errors: number; warnings: number; ignored: number };
  problems: { ruleId: string; severity: string; message: string; location: { pointer?: string }[] }[];
};

/** Runs the installed redocly CLI (a Node program) on one file with the repository's redocly.yaml. */
async function redoclyLint(file: string): Promise<LintReport> {
  const proc = Bun.spawn(
    [
      Bun.which("node") ?? process.execPath,
      join(ROOT, "node_modules/@redocly/cli/bin/cli.js"),
      "lint",
      "--config",
      join(ROOT, "redocly.yaml"),
      "--format=json",
      file,
    ],
    {
      cwd: ROOT,
      stdout: "pipe",
      stderr: "pipe",
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? tmpdir(),
        // No usage report, no update check, no notices: the lint reaches no network.
        REDOCLY_TELEMETRY: "off",
        REDOCLY_SUPPRESS_UPDATE_NOTICE: "true",
        REDOCLY_SUPPRESS_NOTIFICATIONS: "true",
        CI: "true",
        NO_COLOR: "1",
      },
    },
  );
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  await proc.exited;
  const start = stdout.indexOf("{");
  if (start < 0) throw new Error(`redocly printed no report (exit ${proc.exitCode}): ${stderr}`);
  return { file, ...(JSON.parse(stdout.slice(start)) as Omit<LintReport, "file">) };
}
