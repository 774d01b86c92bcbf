import { expect, test } from "bun:test";
import { resetsAfterCommit, withChaos } from "./chaos-env.ts";
import { chaosFromEnv } from "./faults.ts";

const VARS = { CHAOS_D1: JSON.stringify({ rate: 1 }), CHAOS_QUEUE: JSON.stringify({ lose: 1 }), CHAOS_DO_RESET: "1" };

test("a deployment never injects faults: every CHAOS_* var is ignored outside development", () => {
  for (const ENVIRONMENT of ["production", undefined, "Development", "staging"]) {
    expect(chaosFromEnv({ ENVIRONMENT, ...VARS })).toEqual({});
    const env = { ENVIRONMENT, ...VARS, DB: {} as D1Database };
    expect(withChaos(env, "api")).toBe(env);
    expect(resetsAfterCommit({ ENVIRONMENT, ...VARS }, () => 0)).toBe(false);
  }
});

test("in development the vars wrap the bindings of the sites they name, and only those", () => {
  const db = {} as D1Database;
  const env = { ENVIRONMENT: "development", CHAOS_D1: JSON.stringify({ rate: 1, sites: ["cron"] }), DB: db };
  expect(withChaos(env, "api").DB).toBe(db);
  expect(withChaos(env, "cron").DB).not.toBe(db);
  expect(resetsAfterCommit({ ENVIRONMENT: "development", CHAOS_DO_RESET: "0.5" }, () => 0.4)).toBe(true);
  expect(resetsAfterCommit({ ENVIRONMENT: "development", CHAOS_DO_RESET: "0.5" }, () => 0.6)).toBe(false);
});
