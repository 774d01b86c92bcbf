import { describe, expect, test } from "bun:test";
import { oncePerEnv } from "./once-per-env.ts";

describe("oncePerEnv", () => {
  test("builds once per env object; another env object builds its own", () => {
    let builds = 0;
    const of = oncePerEnv((env: { name: string }) => ({ name: env.name, build: ++builds }));
    const a = { name: "a" };
    expect(of(a)).toBe(of(a));
    expect(of({ name: "b" })).toEqual({ name: "b", build: 2 });
    expect(builds).toBe(2);
  });

  test("a build that throws caches nothing: the next call builds (and throws) again", () => {
    let calls = 0;
    const of = oncePerEnv((_env: object) => {
      calls++;
      throw new Error("not configured");
    });
    const env = {};
    expect(() => of(env)).toThrow("not configured");
    expect(() => of(env)).toThrow("not configured");
    expect(calls).toBe(2);
  });
});
