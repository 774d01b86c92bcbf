import { describe, expect, test } from "bun:test";
import { missingSecrets, withRequiredSecrets } from "./required-secrets.ts";

/** A request as a worker receives it. */
const req = (url: string) => new Request(url) as Parameters<ExportedHandlerFetchHandler>[0];

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe("required secrets", () => {
  test("a deployment lacking a required secret is told which; development needs none", () => {
    expect(missingSecrets({ ENVIRONMENT: "production", JWT_SECRET: "x".repeat(32) }, ["JWT_SECRET", "SECRETS_KEY"])).toEqual(["SECRETS_KEY"]);
    expect(missingSecrets({ ENVIRONMENT: "production", JWT_SECRET: "", SECRETS_KEY: "k" }, ["JWT_SECRET", "SECRETS_KEY"])).toEqual(["JWT_SECRET"]);
    expect(missingSecrets({}, ["SECRETS_KEY"])).toEqual(["SECRETS_KEY"]); // no ENVIRONMENT: a deployment
    expect(missingSecrets({ ENVIRONMENT: "development" }, ["JWT_SECRET", "SECRETS_KEY"])).toEqual([]);
  });

  test("fetch answers 503 naming the missing secrets (never a value), logs once per isolate, and never runs the handler", async () => {
    const errors: unknown[] = [];
    let ran = 0;
    const worker = withRequiredSecrets<{ ENVIRONMENT?: string; JWT_SECRET?: string; SECRETS_KEY?: string }>(
      ["JWT_SECRET", "SECRETS_KEY"],
      { fetch: async () => (ran++, new Response("ok")) },
      { ...silent, error: (msg: string, fields?: unknown) => errors.push({ msg, fields }) },
    );
    const env = { ENVIRONMENT: "production", SECRETS_KEY: "a-value-that-must-not-leak-0123456789" };
    const ctx = {} as ExecutionContext;
    const res = await worker.fetch!(req("https://api.example/v1/health"), env, ctx);
    expect(res.status).toBe(503);
    const body = (await res.json()) as { statusCode: number; message: string; error: string };
    expect(body.statusCode).toBe(503);
    expect(body.error).toBe("Service Unavailable");
    expect(body.message).toContain("JWT_SECRET");
    expect(body.message).not.toContain("SECRETS_KEY");
    expect(body.message).not.toContain(env.SECRETS_KEY);
    await worker.fetch!(req("https://api.example/v1/me"), env, ctx);
    expect(ran).toBe(0);
    expect(errors).toEqual([{ msg: "worker not configured", fields: { missing: ["JWT_SECRET"] } }]);
    const configured = { ...env, JWT_SECRET: "j".repeat(32) };
    expect((await worker.fetch!(req("https://api.example/v1/health"), configured, ctx)).status).toBe(200);
    expect(ran).toBe(1);
  });

  test("a queue batch or a cron run without its secrets throws (retried, then dead-lettered) instead of being consumed", async () => {
    let consumed = 0;
    const worker = withRequiredSecrets<{ ENVIRONMENT?: string; MAIL_API_KEY?: string }>(
      ["MAIL_API_KEY"],
      { queue: async () => void consumed++, scheduled: async () => void consumed++ },
      silent,
    );
    const batch = { messages: [] } as unknown as MessageBatch;
    expect(() => worker.queue!(batch, { ENVIRONMENT: "production" }, {} as ExecutionContext)).toThrow(/missing secret MAIL_API_KEY/);
    expect(() => worker.scheduled!({} as ScheduledController, { ENVIRONMENT: "production" }, {} as ExecutionContext)).toThrow(/MAIL_API_KEY/);
    expect(consumed).toBe(0);
    await worker.queue!(batch, { ENVIRONMENT: "production", MAIL_API_KEY: "k" }, {} as ExecutionContext);
    expect(consumed).toBe(1);
  });
});
