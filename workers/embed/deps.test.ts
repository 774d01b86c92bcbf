import { describe, expect, test } from "bun:test";
import { embedDepsOfIsolate } from "./deps.ts";
import type { EmbedEnv } from "./env.ts";

const env = (vars: Record<string, unknown> = {}): EmbedEnv =>
  ({ DB: {}, ENVIRONMENT: "production", SECRETS_KEY: "k".repeat(32), ...vars }) as unknown as EmbedEnv;

describe("the embed worker's dependencies", () => {
  test("built once per env object (an isolate's bindings), not once per request: the prepared statements live with the one database", () => {
    const a = env();
    expect(embedDepsOfIsolate(a)).toBe(embedDepsOfIsolate(a));
    expect(embedDepsOfIsolate(a).db).toBe(embedDepsOfIsolate(a).db);
  });

  test("another env object (a chaos wrapper of development) gets its own, from its own vars", () => {
    const a = env();
    const b = env({ EMBED_HOST: "widget.example" });
    expect(embedDepsOfIsolate(b)).not.toBe(embedDepsOfIsolate(a));
    expect([embedDepsOfIsolate(a).widgetHost, embedDepsOfIsolate(b).widgetHost]).toEqual([null, "widget.example"]);
  });

  test("a misconfigured env still fails, every time it is asked (nothing is cached for it)", () => {
    const bad = env({ SECRETS_KEY: "short" });
    expect(() => embedDepsOfIsolate(bad)).toThrow("SECRETS_KEY");
    expect(() => embedDepsOfIsolate(bad)).toThrow("SECRETS_KEY");
  });
});
