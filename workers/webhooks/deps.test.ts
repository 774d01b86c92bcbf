import { describe, expect, test } from "bun:test";
import type { WebhooksEnv } from "./env.ts";
import { webhookDepsOfIsolate } from "./deps.ts";

const env = (vars: Partial<WebhooksEnv> = {}): WebhooksEnv =>
  ({
    DB: {} as D1Database,
    WEBHOOK_DELIVERIES: {} as WebhooksEnv["WEBHOOK_DELIVERIES"],
    ENVIRONMENT: "production",
    SECRETS_KEY: "k".repeat(32),
    MAIL_API_KEY: "mail-key",
    ...vars,
  }) as WebhooksEnv;

describe("the webhooks worker's dependencies", () => {
  test("built once per env object (an isolate's bindings), not once per batch", () => {
    const a = env();
    expect(webhookDepsOfIsolate(a)).toBe(webhookDepsOfIsolate(a));
  });

  test("another env object (a chaos wrapper of development) gets its own, from its own vars", () => {
    const a = env();
    const b = env({ WEBHOOK_TIMEOUT_MS: "2500", WEBHOOK_RETRY_DELAYS_SECONDS: "5,15" });
    const [da, db] = [webhookDepsOfIsolate(a), webhookDepsOfIsolate(b)];
    expect(db).not.toBe(da);
    expect([da.timeoutMs, db.timeoutMs]).toEqual([10_000, 2_500]);
    expect(db.retryDelaysSeconds).toEqual([5, 15]);
  });

  test("a misconfigured env still fails, every time it is asked (nothing is cached for it)", () => {
    const bad = env({ SECRETS_KEY: undefined });
    expect(() => webhookDepsOfIsolate(bad)).toThrow("SECRETS_KEY is not configured");
    expect(() => webhookDepsOfIsolate(bad)).toThrow("SECRETS_KEY is not configured");
  });
});
