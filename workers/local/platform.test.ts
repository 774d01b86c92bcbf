import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestStack, type TestStack } from "./integration.ts";

/**
 * The platform through the real bundled api worker on workerd and D1: the
 * acceptance path signup → API key → /v1/me, revocation on the very next
 * request, roles, tenant isolation and the real rate-limiting binding.
 */
describe("platform on workerd", () => {
  let stack: TestStack;
  let n = 0;
  // Each test talks from its own address so the per-IP limit of one does not touch another.
  const ip = () => ({ "cf-connecting-ip": `198.51.100.${++n}` });
  const PASSWORD = "correct horse battery staple";

  async function signUp() {
    const email = `owner.${Date.now()}.${++n}@merchant.example`;
    const res = await stack.fetch("/v1/auth/signup", { json: { email, password: PASSWORD, companyName: "Acme Pay" }, headers: ip() });
    expect(res.status).toBe(201);
    return { email, token: res.body.accessToken as string, tenantId: res.body.tenant.id as string };
  }
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  beforeAll(async () => {
    stack = await startTestStack({ ratelimits: { IP_LIMITER: { limit: 5, period: 60 } } });
  }, 60_000);
  afterAll(() => stack?.dispose());

  test("signup → API key → /v1/me shows the configuration's loanProductId and the program's embedKey", async () => {
    const owner = await signUp();
    const created = await stack.fetch("/v1/api-keys", { json: { name: "backend" }, headers: bearer(owner.token) });
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^svc_test_[0-9A-Za-z]{32}$/);

    const me = await stack.fetch("/v1/me", { headers: { "x-api-key": created.body.key } });
    expect(me.status).toBe(200);
    expect(me.headers.get("x-request-id")).toBeTruthy();
    expect(me.body.tenant).toMatchObject({ id: owner.tenantId, name: "Acme Pay", mode: "sandbox" });
    expect(me.body.merchantConfigs).toEqual([
      expect.objectContaining({ network: "POLYGON", stablecoin: "USDC", chain: "POLYGON_AMOY", loanProductId: expect.any(String) }),
    ]);
    expect(me.body.widgetPrograms).toEqual([
      expect.objectContaining({ embedKey: expect.stringMatching(/^ek_test_/), loanProductId: me.body.merchantConfigs[0].loanProductId }),
    ]);

    const list = await stack.fetch("/v1/api-keys", { headers: bearer(owner.token) });
    expect(JSON.stringify(list.body)).not.toContain(created.body.key);
  });

  test("a revoked key is refused on the very next request", async () => {
    const owner = await signUp();
    const { body } = await stack.fetch("/v1/api-keys", { json: { name: "k" }, headers: bearer(owner.token) });
    expect((await stack.fetch("/v1/me", { headers: { "x-api-key": body.key } })).status).toBe(200);
    expect((await stack.fetch(`/v1/api-keys/${body.id}`, { method: "DELETE", headers: bearer(owner.token) })).status).toBe(200);
    const next = await stack.fetch("/v1/me", { headers: { "x-api-key": body.key } });
    expect(next.status).toBe(401);
    expect(next.body).toEqual({ statusCode: 401, message: "Invalid or revoked API key", error: "Unauthorized" });
  });

  test("a MEMBER is refused Owner/Admin routes; another tenant's ids are 404", async () => {
    const a = await signUp();
    const b = await signUp();
    const email = `member.${Date.now()}@merchant.example`;
    expect((await stack.fetch("/v1/users", { json: { email, password: PASSWORD, role: "MEMBER" }, headers: bearer(a.token) })).status).toBe(201);
    const login = await stack.fetch("/v1/auth/login", { json: { email, password: PASSWORD }, headers: ip() });
    const member = login.body.accessToken as string;
    const denied = await stack.fetch("/v1/api-keys", { json: { name: "x" }, headers: bearer(member) });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toBe("Forbidden");

    const aMe = await stack.fetch("/v1/me", { headers: bearer(a.token) });
    const configId = aMe.body.merchantConfigs[0].id;
    const programId = aMe.body.widgetPrograms[0].id;
    expect((await stack.fetch(`/v1/merchant-configs/${configId}`, { headers: bearer(b.token) })).status).toBe(404);
    expect((await stack.fetch(`/v1/widget-programs/${programId}`, { headers: bearer(b.token) })).status).toBe(404);
    expect((await stack.fetch(`/v1/merchant-configs/${configId}`, { headers: bearer(a.token) })).status).toBe(200);
  });

  test("a configuration save synchronizes its loan product on D1", async () => {
    const owner = await signUp();
    const me = await stack.fetch("/v1/me", { headers: bearer(owner.token) });
    const config = me.body.merchantConfigs[0];
    const body = {
      network: "BASE",
      stablecoin: "USDC",
      tenures: [7],
      minTicket: "25.00",
      maxTicket: "500.00",
      gracePeriodDays: 5,
      processingFee: { type: "FIXED", value: "1.50" },
      lateFee: { type: "PERCENTAGE", value: "0.50" },
    };
    const saved = await stack.fetch(`/v1/merchant-configs/${config.id}`, { method: "PUT", json: body, headers: bearer(owner.token) });
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({ ...body, chain: "BASE_SEPOLIA", loanProductId: config.loanProductId });
    const db = await stack.db();
    const product = await db
      .prepare("SELECT network, tenures, min_ticket_units, max_ticket_units FROM loan_products WHERE id = ?")
      .bind(config.loanProductId)
      .first();
    expect(product).toEqual({ network: "BASE", tenures: "[7]", min_ticket_units: 25_000_000, max_ticket_units: 500_000_000 });
  });

  test("the rate-limiting binding answers 429 with Retry-After per client IP", async () => {
    const headers = { "cf-connecting-ip": "192.0.2.99" };
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 7; i++) {
      last = await stack.fetch("/v1/auth/login", { json: { email: "nobody@merchant.example", password: "wrong password!" }, headers });
      statuses.push(last.status);
    }
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.at(-1)).toBe(429);
    expect(last!.headers.get("retry-after")).toBe("60");
    expect(last!.body).toEqual({ statusCode: 429, message: "Too many requests; retry later", error: "Too Many Requests" });
  });

  test("the OpenAPI document is served by the bundled worker", async () => {
    const res = await stack.fetch("/v1/openapi.json");
    expect(res.status).toBe(200);
    for (const path of [
      "/v1/auth/signup",
      "/v1/auth/login",
      "/v1/users",
      "/v1/api-keys",
      "/v1/api-keys/{id}",
      "/v1/me",
      "/v1/merchant-configs",
      "/v1/merchant-configs/{id}",
      "/v1/settings",
      "/v1/widget-programs",
      "/v1/widget-programs/{id}",
    ]) {
      expect(Object.keys(res.body.paths)).toContain(path);
    }
  });

  test("go-live on D1: KYB submitted, approved by the operator (decision and audit in one batch), terms recorded; a second decision 409", async () => {
    const owner = await signUp();
    const operator = () => ({ ...ip(), "x-operator-key": "svc_operator_dev" });
    const kyb = await stack.fetch("/v1/go-live/kyb", {
      json: {
        legalName: "Acme Pay Ltd",
        registrationNumber: "HRB 1",
        country: "FR",
        documents: [{ kind: "registry", fileName: "kbis.pdf", sha256: "a".repeat(64) }],
      },
      headers: { ...bearer(owner.token), ...ip() },
    });
    expect(kyb.status).toBe(201);
    const approved = await stack.fetch(`/v1/operator/tenants/${owner.tenantId}/kyb`, { json: { decision: "APPROVED", note: "ok" }, headers: operator() });
    expect(approved.status).toBe(200);
    expect((await stack.fetch(`/v1/operator/tenants/${owner.tenantId}/kyb`, { json: { decision: "REJECTED" }, headers: operator() })).status).toBe(409);
    expect((await stack.fetch(`/v1/operator/tenants/${owner.tenantId}/commercial-terms`, { json: { reference: "MSA-1" }, headers: operator() })).status).toBe(
      201,
    );
    expect((await stack.fetch("/v1/operator/tenants", { headers: { ...bearer(owner.token), ...ip() } })).status).toBe(401);
    const goLive = await stack.fetch("/v1/go-live", { headers: { ...bearer(owner.token), ...ip() } });
    expect(goLive.status).toBe(200);
    expect(goLive.body.nextStep).toBe("LIQUIDITY_AVAILABLE");
    expect(goLive.body.steps.map((s: { status: string }) => s.status)).toEqual(["DONE", "DONE", "DONE", "DONE", "PENDING", ...Array(5).fill("BLOCKED")]);
    expect(goLive.body.audit.map((a: { action: string; decision: string }) => `${a.action} ${a.decision}`)).toEqual([
      "KYB_DECIDED APPROVED",
      "COMMERCIAL_TERMS_RECORDED MSA-1",
    ]);
    const refused = await stack.fetch("/v1/go-live/certify", { method: "POST", headers: { ...bearer(owner.token), ...ip() } });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toContain("LIQUIDITY_AVAILABLE");
  });
});
