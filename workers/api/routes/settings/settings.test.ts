import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { tenantSettings } from "../../../../db/schema/tenant-settings.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";

const PASSWORD = "correct horse battery";
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

const body = (branding: Record<string, unknown> = {}, over: Record<string, unknown> = {}) => ({
  requiresKycBeforeFunding: true,
  branding: {
    companyName: "Acme Store",
    logoUrl: "https://cdn.acme.example/logo.png",
    primaryColor: "#1A2B3C",
    supportEmail: "help@acme.example",
    termsUrl: "https://acme.example/terms",
    ...branding,
  },
  ...over,
});

let app: TestApp;
let owner: string;
let admin: string;
let member: string;
let apiKey: string;
let other: { token: string; tenantId: string };
let noRow: { token: string; tenantId: string };

async function signUp(email: string, companyName: string) {
  const res = await app.request("POST", "/v1/auth/signup", { body: { email, password: PASSWORD, companyName } });
  expect(res.status).toBe(201);
  return { token: res.body.accessToken as string, tenantId: res.body.tenant.id as string };
}

async function addUser(ownerToken: string, email: string, role: "ADMIN" | "MEMBER") {
  expect((await app.request("POST", "/v1/users", { headers: bearer(ownerToken), body: { email, password: PASSWORD, role } })).status).toBe(201);
  return (await app.request("POST", "/v1/auth/login", { body: { email, password: PASSWORD } })).body.accessToken as string;
}

beforeAll(async () => {
  app = await createTestApp();
  owner = (await signUp("owner@acme.example", "Acme")).token;
  admin = await addUser(owner, "admin@acme.example", "ADMIN");
  member = await addUser(owner, "member@acme.example", "MEMBER");
  apiKey = (await app.request("POST", "/v1/api-keys", { headers: bearer(owner), body: { name: "backend" } })).body.key;
  other = await signUp("owner@other.example", "Other Co");
  // Signed up before any test moves the clock: session tokens must not be issued in the future.
  noRow = await signUp("norow@example.com", "No Row Ltd");
});

afterAll(() => app.close());

const put = (b: unknown, token = owner) => app.request("PUT", "/v1/settings", { headers: bearer(token), body: b });

const expectFieldErrors = (res: { status: number; body: any }, ...fields: string[]) => {
  expect(res.status).toBe(400);
  expect(res.body.statusCode).toBe(400);
  expect(Array.isArray(res.body.message)).toBe(true);
  for (const field of fields) expect(res.body.message.some((m: string) => m.startsWith(`${field}: `))).toBe(true);
};

describe("settings: happy path", () => {
  test("after signup: no KYC gate, the company name, nothing else", async () => {
    const res = await app.request("GET", "/v1/settings", { headers: bearer(other.token) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      requiresKycBeforeFunding: false,
      branding: { companyName: "Other Co", logoUrl: null, primaryColor: null, supportEmail: null, termsUrl: null },
      updatedAt: expect.any(String),
    });
  });

  test("PUT replaces the settings, GET reads them back", async () => {
    app.clock.advance(1000);
    const res = await put(body());
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...body(), updatedAt: app.clock.now().toISOString() });
    const got = await app.request("GET", "/v1/settings", { headers: bearer(member) });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  test("null clears a branding field; the company name is trimmed; an ADMIN may write", async () => {
    await put(body());
    const res = await put(
      body({ companyName: "  Acme Two  ", logoUrl: null, primaryColor: null, supportEmail: null, termsUrl: null }, { requiresKycBeforeFunding: false }),
      admin,
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      requiresKycBeforeFunding: false,
      branding: { companyName: "Acme Two", logoUrl: null, primaryColor: null, supportEmail: null, termsUrl: null },
    });
    expect((await app.request("GET", "/v1/settings", { headers: bearer(owner) })).body).toEqual(res.body);
  });

  test("lowercase hex and https URLs with ports, paths and queries are kept as sent", async () => {
    const branding = { primaryColor: "#abcdef", logoUrl: "https://cdn.acme.example:8443/img/logo.svg?v=2", termsUrl: "https://acme.example/legal#terms" };
    const res = await put(body(branding));
    expect(res.status).toBe(200);
    expect(res.body.branding).toMatchObject(branding);
  });

  test("a tenant without a settings row reads the defaults and PUT creates the row", async () => {
    const fresh = noRow;
    await app.db.delete(tenantSettings).where(eq(tenantSettings.tenantId, fresh.tenantId));
    const got = await app.request("GET", "/v1/settings", { headers: bearer(fresh.token) });
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      requiresKycBeforeFunding: false,
      branding: { companyName: "No Row Ltd", logoUrl: null, primaryColor: null, supportEmail: null, termsUrl: null },
      updatedAt: null,
    });
    const res = await put(body(), fresh.token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...body(), updatedAt: app.clock.now().toISOString() });
    const rows = await app.db.select().from(tenantSettings).where(eq(tenantSettings.tenantId, fresh.tenantId));
    expect(rows).toHaveLength(1);
  });
});

describe("settings: errors", () => {
  test("malformed JSON", async () => {
    const res = await app.request("PUT", "/v1/settings", {
      headers: { ...bearer(owner), "content-type": "application/json" },
      rawBody: '{"branding":',
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe("Malformed JSON in request body");
  });

  test("every missing field is named (PUT is a full replacement)", async () => {
    expectFieldErrors(await put({}), "requiresKycBeforeFunding", "branding");
    const res = await put({ requiresKycBeforeFunding: false, branding: {} });
    expectFieldErrors(res, "branding.companyName", "branding.logoUrl", "branding.primaryColor", "branding.supportEmail", "branding.termsUrl");
    expect(res.body.message).toHaveLength(5);
  });

  test.each([
    ["a primaryColor of red", { primaryColor: "red" }, "branding.primaryColor"],
    ["a primaryColor of #fff", { primaryColor: "#fff" }, "branding.primaryColor"],
    ["a primaryColor of #GGGGGG", { primaryColor: "#GGGGGG" }, "branding.primaryColor"],
    ["a primaryColor without #", { primaryColor: "1A2B3C" }, "branding.primaryColor"],
    ["a primaryColor as a number", { primaryColor: 0x1a2b3c }, "branding.primaryColor"],
    ["a javascript: logo URL", { logoUrl: "javascript:alert(document.cookie)" }, "branding.logoUrl"],
    ["a data: logo URL", { logoUrl: "data:image/svg+xml;base64,PHN2Zz4=" }, "branding.logoUrl"],
    ["an http: logo URL", { logoUrl: "http://cdn.acme.example/logo.png" }, "branding.logoUrl"],
    ["a relative logo URL", { logoUrl: "/logo.png" }, "branding.logoUrl"],
    ["an empty logo URL", { logoUrl: "" }, "branding.logoUrl"],
    ["a logo URL with credentials", { logoUrl: "https://u:p@cdn.acme.example/logo.png" }, "branding.logoUrl"],
    ["a javascript: terms URL", { termsUrl: "javascript:alert(1)" }, "branding.termsUrl"],
    ["an http: terms URL", { termsUrl: "http://acme.example/terms" }, "branding.termsUrl"],
    ["a terms URL of 2049 characters", { termsUrl: `https://acme.example/${"t".repeat(2049 - 21)}` }, "branding.termsUrl"],
    ["a support e-mail that is not one", { supportEmail: "not-an-email" }, "branding.supportEmail"],
    ["an empty company name", { companyName: "" }, "branding.companyName"],
    ["a blank company name", { companyName: "   " }, "branding.companyName"],
    ["a null company name", { companyName: null }, "branding.companyName"],
    ["a company name of 201 characters", { companyName: "x".repeat(201) }, "branding.companyName"],
  ])("%s", async (_name, branding, field) => {
    const res = await put(body(branding));
    expectFieldErrors(res, field);
    expect(res.body.message).toHaveLength(1);
  });

  test("a terms URL of exactly 2048 characters is accepted", async () => {
    const termsUrl = `https://acme.example/${"t".repeat(2048 - 21)}`;
    expect(termsUrl).toHaveLength(2048);
    expect((await put(body({ termsUrl }))).status).toBe(200);
  });

  test.each([
    ["a string", "yes"],
    ["a number", 1],
    ["null", null],
  ])("requiresKycBeforeFunding as %s", async (_n, value) => {
    expectFieldErrors(await put(body({}, { requiresKycBeforeFunding: value })), "requiresKycBeforeFunding");
  });

  test("branding that is not an object", async () => {
    expectFieldErrors(await put(body({}, { branding: "Acme" })), "branding");
    expectFieldErrors(await put(body({}, { branding: null })), "branding");
  });

  test("hostile values in any branding field answer 400, never 500", async () => {
    const values = [true, -1, 1e308, "x".repeat(5000), [], {}, "https://" + "a".repeat(3000) + ".com", "javascript://%0aalert(1)"];
    for (const field of Object.keys(body().branding)) {
      for (const value of values) {
        if (field === "companyName" && typeof value === "string" && value.length <= 200) continue; // a valid name
        const res = await put(body({ [field]: value }));
        expect(res.status).toBe(400);
      }
    }
  });

  test("several bad fields are reported together, and nothing is saved", async () => {
    const before = (await app.request("GET", "/v1/settings", { headers: bearer(owner) })).body;
    const res = await put(body({ primaryColor: "red", logoUrl: "javascript:alert(1)", supportEmail: "nope" }, { requiresKycBeforeFunding: "no" }));
    expectFieldErrors(res, "branding.primaryColor", "branding.logoUrl", "branding.supportEmail", "requiresKycBeforeFunding");
    expect(res.body.message).toHaveLength(4);
    expect((await app.request("GET", "/v1/settings", { headers: bearer(owner) })).body).toEqual(before);
  });
});

describe("settings: security", () => {
  const ROUTES = [["GET"], ["PUT"]] as const;

  test.each(ROUTES)("%s /v1/settings without credentials: 401", async (method) => {
    const res = await app.request(method, "/v1/settings", { body: method === "PUT" ? body() : undefined });
    expect(res.status).toBe(401);
  });

  test.each(ROUTES)("%s /v1/settings with an API key: 401 (dashboard only)", async (method) => {
    const res = await app.request(method, "/v1/settings", { headers: { "x-api-key": apiKey }, body: method === "PUT" ? body() : undefined });
    expect(res.status).toBe(401);
    expect(res.body.message).toContain("dashboard session");
  });

  test("a MEMBER may read but not write", async () => {
    await put(body({ companyName: "Before Member" }));
    expect((await app.request("GET", "/v1/settings", { headers: bearer(member) })).status).toBe(200);
    const res = await put(body({ companyName: "Member Was Here" }), member);
    expect(res.status).toBe(403);
    expect(res.body.error).toBe("Forbidden");
    expect((await app.request("GET", "/v1/settings", { headers: bearer(owner) })).body.branding.companyName).toBe("Before Member");
  });

  test("settings are per tenant", async () => {
    await put(body({ companyName: "Only Acme", primaryColor: "#FF0000" }));
    const theirs = await app.request("GET", "/v1/settings", { headers: bearer(other.token) });
    expect(theirs.body.branding).toEqual({ companyName: "Other Co", logoUrl: null, primaryColor: null, supportEmail: null, termsUrl: null });
  });

  test("the OpenAPI document lists both routes with the dashboard session as their security", async () => {
    const doc = (await app.request("GET", "/v1/openapi.json")).body;
    const get = doc.paths["/v1/settings"]?.get;
    const putOp = doc.paths["/v1/settings"]?.put;
    expect(get.security).toEqual([{ DashboardSession: [] }]);
    expect(putOp.security).toEqual([{ DashboardSession: [] }]);
    expect(putOp.responses["400"]).toBeDefined();
    expect(putOp.responses["403"]).toBeDefined();
    expect(get.responses["401"]).toBeDefined();
    expect(putOp.description).toContain("roles OWNER/ADMIN");
  });
});

describe("settings: robustness", () => {
  test("no request in this file answered 500", () => {
    expect(app.logs.filter((line) => line.includes("unhandled error"))).toEqual([]);
  });
});
