import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestStack, testBundles, type TestStack } from "./integration.ts";
import { bundleModules, startStack } from "./stack.ts";

describe("local stack (bundled workers in miniflare)", () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack();
  }, 60_000);
  afterAll(() => stack?.dispose());

  test("the api answers /v1/health on the base URL", async () => {
    const res = await stack.fetch("/v1/health");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "ok" });
    expect(res.headers.get("x-request-id")).toBeTruthy();
  });

  test("/v1/embed/* on the base URL is routed to the embed worker", async () => {
    const res = await stack.fetch("/v1/embed/unknown/config");
    expect(res.status).toBe(404);
    expect(res.headers.get("x-svc-worker")).toBe("embed");
    expect(res.body).toEqual({ statusCode: 404, message: expect.any(String), error: "Not Found" });
  });

  test("the embed worker answers /health on its own URL", async () => {
    const res = await stack.fetch(`${stack.embedUrl}/health`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "ok", service: "embed" });
  });

  test("the cron worker's scheduled handler runs, each of its jobs in an invocation of its own", async () => {
    const tick = await stack.scheduled();
    expect(tick.outcome).toBe("ok");
    expect(tick.noRetry).toBe(false);
    expect([...(tick.jobs ?? [])].sort()).toEqual([
      "gas-alerts",
      "heartbeat",
      "live-settlement-listener",
      "recover-deliveries",
      "relay-outbox",
      "retention",
      "retry-funding",
      "settlement-listener",
      "sweep-loans",
    ]);
  });

  test("the migrations have created the tables", async () => {
    const db = await stack.db();
    const { results } = await db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all<{ name: string }>();
    const tables = results.map((r) => r.name);
    expect(tables).toContain("d1_migrations");
    expect(tables).toContain("tenants");
    expect(tables).toContain("api_keys");
  });
});

describe("a stack that keeps nothing", () => {
  // Miniflare's own "in memory" stores are SQLite files in a temporary folder, usually on disk, and workerd
  // writes them on its one thread: a commit's disk write stalled every request of the stack (bench/HISTORY.md, "The stalls were mostly the disk").
  test.skipIf(!existsSync("/dev/shm"))(
    "keeps its stores in RAM (/dev/shm) and removes them on dispose",
    async () => {
      const stack = await startStack({ build: false, outDir: await testBundles(), logLevel: "error" });
      const dir = stack.storesDir!;
      try {
        expect(dir.startsWith("/dev/shm/svc-credit-stack-")).toBe(true);
        // The database is there: a write lands in a SQLite file under it.
        const db = await stack.mf.getD1Database("DB", stack.names.api);
        await db.prepare("SELECT COUNT(*) AS n FROM tenants").first();
        expect(readdirSync(join(dir, "d1"), { recursive: true }).some((f) => String(f).endsWith(".sqlite"))).toBe(true);
      } finally {
        await stack.dispose();
      }
      expect(existsSync(dir)).toBe(false);
    },
    60_000,
  );
});

describe("a bundle goes to workerd as one module", () => {
  test("a bundle alone is listed (no parse to find its imports); one with a chunk or a .wasm beside it is left to Miniflare", () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-credit-bundle-"));
    try {
      const entry = join(dir, "index.js");
      writeFileSync(entry, "export default {};");
      for (const f of ["index.js.map", "README.md", "wrangler-output.txt"]) writeFileSync(join(dir, f), "");
      expect(bundleModules(entry)).toEqual({ modules: [{ type: "ESModule", path: entry }] });
      for (const f of ["chunk-1.js", "module.wasm"]) {
        writeFileSync(join(dir, f), "");
        expect(bundleModules(entry)).toEqual({ scriptPath: entry, modules: true });
        rmSync(join(dir, f));
      }
    } finally {
      rmSync(dir, { recursive: true });
    }
  });
});
