import { describe, expect, test } from "bun:test";
import { DEV_OPERATOR_KEY, operatorKeyMatches } from "../../shared/auth/operator-key.ts";
import { type ApiEnv, depsFromEnv } from "./deps.ts";

/** Bindings that are never called here: depsFromEnv only wraps them. */
const env = (vars: Partial<ApiEnv>): ApiEnv =>
  ({
    JWT_SECRET: "j".repeat(32),
    SECRETS_KEY: "s".repeat(32),
    DB: {},
    LOANS: {},
    AGREEMENT_CHALLENGES: {},
    SIM_CHAINS: {},
    WEBHOOK_DELIVERIES: {},
    ...vars,
  }) as unknown as ApiEnv;

describe("the operator key's configuration", () => {
  test("development without OPERATOR_KEY: svc_operator_dev; with it, only it", () => {
    expect(depsFromEnv(env({ ENVIRONMENT: "development" })).operatorKey).toBe(DEV_OPERATOR_KEY);
    expect(depsFromEnv(env({ ENVIRONMENT: "development", OPERATOR_KEY: "op-key-0123456789abcdef" })).operatorKey).toBe("op-key-0123456789abcdef");
  });

  test("outside development no default: without the secret no key is accepted, svc_operator_dev included", async () => {
    const deps = depsFromEnv(env({ ENVIRONMENT: "production" }));
    expect(deps.operatorKey).toBeNull();
    expect(await operatorKeyMatches(deps.operatorKey, DEV_OPERATOR_KEY)).toBe(false);
    expect(depsFromEnv(env({ OPERATOR_KEY: "op-key-0123456789abcdef" })).operatorKey).toBe("op-key-0123456789abcdef");
  });

  test("the compare: equal keys only, whatever the length", async () => {
    const secret = "op-key-0123456789abcdef";
    expect(await operatorKeyMatches(secret, secret)).toBe(true);
    for (const wrong of ["", "op-key", `${secret}0`, secret.toUpperCase(), secret.slice(0, -1)]) expect(await operatorKeyMatches(secret, wrong)).toBe(false);
    expect(await operatorKeyMatches(secret, undefined)).toBe(false);
  });
});
