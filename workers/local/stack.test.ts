import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestStack, type TestStack } from "./integration.ts";

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
