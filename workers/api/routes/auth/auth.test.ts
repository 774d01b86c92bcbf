import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { liquidityPools } from "../../../../db/schema/liquidity-pools.ts";
import { loanProducts } from "../../../../db/schema/loan-products.ts";
import { users } from "../../../../db/schema/users.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import { bearer, PASSWORD, signUpTenant, uniqueEmail } from "../../../../shared/testing/fixtures.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe("POST /v1/auth/signup", () => {
  test("creates a sandbox tenant that can lend at once", async () => {
    const email = uniqueEmail();
    const res = await t.request("POST", "/v1/auth/signup", { body: { email: email.toUpperCase(), password: PASSWORD, companyName: " Acme " } });
    expect(res.status).toBe(201);
    expect(res.body.tenant).toEqual({ id: expect.any(String), name: "Acme" });
    expect(res.body.user).toEqual({ id: expect.any(String), email, role: "OWNER" });
    expect(res.body.accessToken).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(Date.parse(res.body.expiresAt) - Date.now()).toBeGreaterThan(3500_000);

    const me = await t.request("GET", "/v1/me", { headers: bearer(res.body.accessToken) });
    expect(me.status).toBe(200);
    expect(me.body.mode).toBe("sandbox");
    expect(me.body.merchantConfigs).toHaveLength(1);
    const config = me.body.merchantConfigs[0];
    expect(config).toMatchObject({ network: "POLYGON", stablecoin: "USDC", chain: "POLYGON_AMOY", tenures: [3, 7, 15], minTicket: "10.00", maxTicket: "1000.00" });
    const [product] = await t.db.select().from(loanProducts).where(eq(loanProducts.id, config.loanProductId));
    expect(product).toMatchObject({ status: "ACTIVE", merchantConfigId: config.id, network: "POLYGON", stablecoin: "USDC", version: "v1" });
    expect(me.body.widgetPrograms).toHaveLength(1);
    expect(me.body.widgetPrograms[0]).toMatchObject({ merchantConfigId: config.id, loanProductId: config.loanProductId });
    expect(me.body.widgetPrograms[0].embedKey).toMatch(/^ek_test_/);
    const pools = await t.db.select().from(liquidityPools).where(eq(liquidityPools.tenantId, res.body.tenant.id));
    expect(pools.map((p) => p.stablecoin).sort()).toEqual(["USDC", "USDT"]);
    for (const pool of pools) expect(pool).toMatchObject({ mode: "sandbox", available: 100_000_000_000n, reserved: 0n });
  });

  test("stores the password as a salted PBKDF2 hash, never the password", async () => {
    const { email } = await signUpTenant(t);
    const [row] = await t.db.select().from(users).where(eq(users.email, email));
    expect(row!.passwordHash).not.toContain(PASSWORD);
    expect(row!.passwordIterations).toBe(100_000);
    expect(atob(row!.passwordSalt)).toHaveLength(16);
  });

  test("an e-mail with an account is a 409, whatever its case", async () => {
    const { email } = await signUpTenant(t);
    const res = await t.request("POST", "/v1/auth/signup", { body: { email: email.toUpperCase(), password: PASSWORD, companyName: "Other" } });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ statusCode: 409, message: "An account with this e-mail already exists", error: "Conflict" });
  });

  test("validation names every bad field", async () => {
    const res = await t.request("POST", "/v1/auth/signup", { body: { email: "not-an-email", password: "short", companyName: 42 } });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("Bad Request");
    const fields = (res.body.message as string[]).map((m) => m.split(":")[0]);
    expect(fields.sort()).toEqual(["companyName", "email", "password"]);
    expect(res.body.message.find((m: string) => m.startsWith("password"))).toContain("at least 12 characters");
  });
});

describe("POST /v1/auth/login", () => {
  test("valid credentials give an expiring session for the user", async () => {
    const { email, userId } = await signUpTenant(t);
    const res = await t.request("POST", "/v1/auth/login", { body: { email, password: PASSWORD } });
    expect(res.status).toBe(200);
    expect(res.body.user).toEqual({ id: userId, email, role: "OWNER" });
    const me = await t.request("GET", "/v1/me", { headers: bearer(res.body.accessToken) });
    expect(me.body.principal).toEqual({ kind: "user", userId, email, role: "OWNER" });
  });

  test("a wrong password and an unknown e-mail get the same 401", async () => {
    const { email } = await signUpTenant(t);
    const wrong = await t.request("POST", "/v1/auth/login", { body: { email, password: "wrong password!!" } });
    const unknown = await t.request("POST", "/v1/auth/login", { body: { email: uniqueEmail("nobody"), password: PASSWORD } });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ statusCode: 401, message: "Invalid e-mail or password", error: "Unauthorized" });
    expect(unknown.body).toEqual(wrong.body);
  });

  test("an expired session token is a 401 with the error body", async () => {
    const { email } = await signUpTenant(t);
    t.clock.set(new Date(Date.now() - 2 * 3600_000));
    const old = await t.request("POST", "/v1/auth/login", { body: { email, password: PASSWORD } });
    t.clock.set(new Date());
    expect(old.status).toBe(200);
    const res = await t.request("GET", "/v1/me", { headers: bearer(old.body.accessToken) });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ statusCode: 401, message: "Invalid or expired session token", error: "Unauthorized" });
  });

  test("a token for a user that no longer exists is a 401", async () => {
    const { token, userId } = await signUpTenant(t);
    await t.db.delete(users).where(eq(users.id, userId));
    const res = await t.request("GET", "/v1/me", { headers: bearer(token) });
    expect(res.status).toBe(401);
    expect(res.body.statusCode).toBe(401);
  });
});
