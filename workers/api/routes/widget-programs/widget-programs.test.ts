import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { widgetPrograms } from "../../../../db/schema/widget-programs.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";

const PASSWORD = "correct horse battery";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const EMBED_KEY = /^ek_test_[0-9A-Za-z]{24}$/;
const UNKNOWN_ID = "7d2f4a0e-7c1b-4b8e-9a57-0c6f0c2d9e11";
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

const TON_CONFIG = {
  network: "TON",
  stablecoin: "USDT",
  tenures: [7],
  minTicket: "5.00",
  maxTicket: "200.00",
  gracePeriodDays: 2,
  processingFee: { type: "FIXED", value: "1.00" },
  lateFee: { type: "FIXED", value: "0.50" },
};

type Config = { id: string; loanProductId: string };

let app: TestApp;
let owner: string;
let member: string;
let apiKey: string;
let polygon: Config;
let ton: Config;
let other: { token: string; config: Config; programId: string };

async function signUp(email: string) {
  const res = await app.request("POST", "/v1/auth/signup", { body: { email, password: PASSWORD, companyName: "Acme" } });
  expect(res.status).toBe(201);
  const token = res.body.accessToken as string;
  const me = (await app.request("GET", "/v1/me", { headers: bearer(token) })).body;
  return { token, config: me.merchantConfigs[0] as Config, programId: me.widgetPrograms[0].id as string };
}

beforeAll(async () => {
  app = await createTestApp();
  const acme = await signUp("owner@acme.example");
  owner = acme.token;
  polygon = acme.config;
  await app.request("POST", "/v1/users", { headers: bearer(owner), body: { email: "member@acme.example", password: PASSWORD, role: "MEMBER" } });
  member = (await app.request("POST", "/v1/auth/login", { body: { email: "member@acme.example", password: PASSWORD } })).body.accessToken;
  apiKey = (await app.request("POST", "/v1/api-keys", { headers: bearer(owner), body: { name: "backend" } })).body.key;
  ton = (await app.request("POST", "/v1/merchant-configs", { headers: bearer(owner), body: TON_CONFIG })).body;
  other = await signUp("owner@other.example");
});

afterAll(() => app.close());

const body = (over: Record<string, unknown> = {}) => ({
  name: "Checkout widget",
  merchantConfigId: polygon.id,
  allowedOrigins: ["https://shop.example.com", "http://localhost:3000"],
  ...over,
});
const create = (b: unknown = body(), token = owner) => app.request("POST", "/v1/widget-programs", { headers: bearer(token), body: b });

const expectFieldErrors = (res: { status: number; body: any }, ...fields: string[]) => {
  expect(res.status).toBe(400);
  expect(res.body.statusCode).toBe(400);
  expect(Array.isArray(res.body.message)).toBe(true);
  for (const field of fields) expect(res.body.message.some((m: string) => m.startsWith(`${field}: `))).toBe(true);
};

describe("widget programs: happy path", () => {
  test("POST creates a program with its own embed key on the configuration's rail and product", async () => {
    const now = app.clock.now().toISOString();
    const res = await create();
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID),
      embedKey: expect.stringMatching(EMBED_KEY),
      mode: "sandbox",
      name: "Checkout widget",
      merchantConfigId: polygon.id,
      network: "POLYGON",
      stablecoin: "USDC",
      loanProductId: polygon.loanProductId,
      allowedOrigins: ["https://shop.example.com", "http://localhost:3000"],
      createdAt: now,
      updatedAt: now,
    });
    const got = await app.request("GET", `/v1/widget-programs/${res.body.id}`, { headers: bearer(owner) });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  test("every program gets a fresh embed key", async () => {
    const created: string[] = [];
    for (let i = 0; i < 5; i++) created.push((await create(body({ name: `Program ${i}` }))).body.embedKey);
    const keys = (await app.request("GET", "/v1/widget-programs?limit=100", { headers: bearer(owner) })).body.data.map((p: { embedKey: string }) => p.embedKey);
    expect(keys).toEqual(expect.arrayContaining(created));
    expect(new Set(keys).size).toBe(keys.length);
  });

  test("a program on the TON configuration lends on TON/USDT; an empty origin list is allowed", async () => {
    const res = await create(body({ merchantConfigId: ton.id, allowedOrigins: [] }));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ network: "TON", stablecoin: "USDT", loanProductId: ton.loanProductId, allowedOrigins: [] });
  });

  test("local development origins and 20 origins are accepted", async () => {
    const origins = [
      "http://localhost",
      "http://localhost:5173",
      "http://127.0.0.1",
      "http://127.0.0.1:8787",
      "https://localhost:3000",
      "https://shop.example.com:8443",
      ...Array.from({ length: 14 }, (_, i) => `https://shop${i}.example.com`),
    ];
    expect(origins).toHaveLength(20);
    const res = await create(body({ allowedOrigins: origins }));
    expect(res.status).toBe(201);
    expect(res.body.allowedOrigins).toEqual(origins);
  });

  test("the list is newest first, leaves out deleted programs and pages with a cursor", async () => {
    const fresh = await createTestApp();
    try {
      const signup = await fresh.request("POST", "/v1/auth/signup", { body: { email: "o@p.example", password: PASSWORD, companyName: "P" } });
      const token = signup.body.accessToken;
      const me = (await fresh.request("GET", "/v1/me", { headers: bearer(token) })).body;
      const ids: string[] = [me.widgetPrograms[0].id];
      for (const name of ["Second", "Third", "Fourth"]) {
        fresh.clock.advance(1000);
        const res = await fresh.request("POST", "/v1/widget-programs", {
          headers: bearer(token),
          body: { name, merchantConfigId: me.merchantConfigs[0].id, allowedOrigins: [] },
        });
        ids.push(res.body.id);
      }
      expect((await fresh.request("DELETE", `/v1/widget-programs/${ids[2]}`, { headers: bearer(token) })).status).toBe(204);
      const first = await fresh.request("GET", "/v1/widget-programs?limit=2", { headers: bearer(token) });
      expect(first.status).toBe(200);
      expect(first.body.data.map((p: { id: string }) => p.id)).toEqual([ids[3], ids[1]]);
      expect(first.body.data[0]).toMatchObject({ name: "Fourth", embedKey: expect.stringMatching(EMBED_KEY), network: "POLYGON" });
      const second = await fresh.request("GET", `/v1/widget-programs?limit=2&cursor=${first.body.nextCursor}`, { headers: bearer(token) });
      expect(second.body.data.map((p: { id: string }) => p.id)).toEqual([ids[0]]);
      expect(second.body.nextCursor).toBeNull();
    } finally {
      fresh.close();
    }
  });

  test("PUT replaces name, configuration and origins; the embed key never changes", async () => {
    const created = (await create()).body;
    app.clock.advance(5000);
    const res = await app.request("PUT", `/v1/widget-programs/${created.id}`, {
      headers: bearer(owner),
      body: { name: "Renamed", merchantConfigId: ton.id, allowedOrigins: ["https://app.example.org"] },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: created.id,
      embedKey: created.embedKey,
      mode: "sandbox",
      name: "Renamed",
      merchantConfigId: ton.id,
      network: "TON",
      stablecoin: "USDT",
      loanProductId: ton.loanProductId,
      allowedOrigins: ["https://app.example.org"],
      createdAt: created.createdAt,
      updatedAt: app.clock.now().toISOString(),
    });
    expect((await app.request("GET", `/v1/widget-programs/${created.id}`, { headers: bearer(owner) })).body).toEqual(res.body);
  });

  test("a body's embedKey is ignored: the key cannot be chosen or changed", async () => {
    const created = (await create(body({ embedKey: "ek_test_chosenbyme" }))).body;
    expect(created.embedKey).toMatch(EMBED_KEY);
    const put = await app.request("PUT", `/v1/widget-programs/${created.id}`, {
      headers: bearer(owner),
      body: body({ embedKey: "ek_test_chosenbyme" }),
    });
    expect(put.body.embedKey).toBe(created.embedKey);
  });

  test("DELETE soft-deletes: 204, then 404 on GET, PUT and DELETE, gone from lists and /v1/me", async () => {
    const created = (await create(body({ name: "Doomed" }))).body;
    const res = await app.request("DELETE", `/v1/widget-programs/${created.id}`, { headers: bearer(owner) });
    expect(res.status).toBe(204);
    expect(res.body).toBeNull();

    const get = await app.request("GET", `/v1/widget-programs/${created.id}`, { headers: bearer(owner) });
    expect(get.status).toBe(404);
    expect(get.body).toEqual({ statusCode: 404, message: "Widget program not found", error: "Not Found" });
    expect((await app.request("PUT", `/v1/widget-programs/${created.id}`, { headers: bearer(owner), body: body() })).status).toBe(404);
    expect((await app.request("DELETE", `/v1/widget-programs/${created.id}`, { headers: bearer(owner) })).status).toBe(404);

    const list = await app.request("GET", "/v1/widget-programs?limit=100", { headers: bearer(owner) });
    expect(list.body.data.some((p: { id: string }) => p.id === created.id)).toBe(false);
    const me = await app.request("GET", "/v1/me", { headers: bearer(owner) });
    expect(me.body.widgetPrograms.some((p: { id: string }) => p.id === created.id)).toBe(false);

    const [row] = await app.db.select().from(widgetPrograms).where(eq(widgetPrograms.id, created.id));
    expect(row?.deletedAt).toEqual(app.clock.now());
    expect(row?.embedKey).toBe(created.embedKey);
  });
});

describe("widget programs: errors", () => {
  test("malformed JSON", async () => {
    const res = await app.request("POST", "/v1/widget-programs", {
      headers: { ...bearer(owner), "content-type": "application/json" },
      rawBody: '{"name": ',
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe("Malformed JSON in request body");
  });

  test("every missing field is named", async () => {
    const res = await create({});
    expectFieldErrors(res, "name", "merchantConfigId", "allowedOrigins");
    expect(res.body.message).toHaveLength(3);
  });

  test.each([
    ["a trailing slash", "https://shop.example.com/"],
    ["a path", "https://shop.example.com/checkout"],
    ["a query", "https://shop.example.com?x=1"],
    ["a fragment", "https://shop.example.com#top"],
    ["plain http on a public host", "http://shop.example.com"],
    ["a wildcard", "https://*.example.com"],
    ["a bare wildcard", "*"],
    ["credentials", "https://user:pw@shop.example.com"],
    ["an uppercase host", "https://Shop.example.com"],
    ["the default port", "https://shop.example.com:443"],
    ["no scheme", "shop.example.com"],
    ["a javascript: URL", "javascript:alert(1)"],
    ["the null origin", "null"],
    ["an empty string", ""],
    ["http on a lookalike of localhost", "http://localhost.evil.example"],
  ])("an origin with %s: 400 naming allowedOrigins.N", async (_name, origin) => {
    const res = await create(body({ allowedOrigins: ["https://ok.example.com", origin] }));
    expectFieldErrors(res, "allowedOrigins.1");
    expect(res.body.message).toHaveLength(1);
  });

  test("repeated origins are rejected, naming the repeat", async () => {
    const res = await create(body({ allowedOrigins: ["https://a.example.com", "https://b.example.com", "https://a.example.com"] }));
    expectFieldErrors(res, "allowedOrigins.2");
    expect(res.body.message).toEqual(["allowedOrigins.2: repeats allowedOrigins.0"]);
  });

  test("more than 20 origins", async () => {
    const res = await create(body({ allowedOrigins: Array.from({ length: 21 }, (_, i) => `https://s${i}.example.com`) }));
    expectFieldErrors(res, "allowedOrigins");
  });

  test.each([
    ["allowedOrigins not an array", { allowedOrigins: "https://shop.example.com" }, "allowedOrigins"],
    ["an origin that is not a string", { allowedOrigins: [42] }, "allowedOrigins.0"],
    ["an empty name", { name: "" }, "name"],
    ["a blank name", { name: "   " }, "name"],
    ["a name of 101 characters", { name: "n".repeat(101) }, "name"],
    ["a name as a number", { name: 7 }, "name"],
    ["a merchantConfigId that is not a UUID", { merchantConfigId: "config-1" }, "merchantConfigId"],
    ["a null merchantConfigId", { merchantConfigId: null }, "merchantConfigId"],
  ])("%s", async (_name, over, field) => {
    expectFieldErrors(await create(body(over)), field);
  });

  test("bad fields are reported together", async () => {
    const res = await create({ name: "", merchantConfigId: "x", allowedOrigins: ["http://shop.example.com", "https://ok.example.com/"] });
    expectFieldErrors(res, "name", "merchantConfigId", "allowedOrigins.0", "allowedOrigins.1");
    expect(res.body.message).toHaveLength(4);
  });

  test("an unknown merchantConfigId: 404 naming the merchant configuration", async () => {
    const res = await create(body({ merchantConfigId: UNKNOWN_ID }));
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ statusCode: 404, message: "Merchant configuration not found", error: "Not Found" });
  });

  test("hostile values in any field answer 400, never 500", async () => {
    const values = [null, true, -1, 1e308, "", "x".repeat(5000), [], {}, ["x".repeat(5000)], Array(500).fill("https://a.example.com")];
    for (const field of Object.keys(body())) {
      for (const value of values) {
        if (field === "allowedOrigins" && Array.isArray(value) && value.length === 0) continue; // [] is valid
        const res = await create(body({ [field]: value }));
        expect(res.status).toBe(400);
      }
    }
  });

  test("PUT applies the same rules and leaves the program unchanged", async () => {
    const created = (await create()).body;
    const bad = await app.request("PUT", `/v1/widget-programs/${created.id}`, {
      headers: bearer(owner),
      body: body({ allowedOrigins: ["https://ok.example.com", "https://ok.example.com/"] }),
    });
    expectFieldErrors(bad, "allowedOrigins.1");
    const missing = await app.request("PUT", `/v1/widget-programs/${created.id}`, { headers: bearer(owner), body: { name: "Only a name" } });
    expectFieldErrors(missing, "merchantConfigId", "allowedOrigins");
    const unknownConfig = await app.request("PUT", `/v1/widget-programs/${created.id}`, {
      headers: bearer(owner),
      body: body({ merchantConfigId: UNKNOWN_ID }),
    });
    expect(unknownConfig.status).toBe(404);
    expect(unknownConfig.body.message).toBe("Merchant configuration not found");
    expect((await app.request("GET", `/v1/widget-programs/${created.id}`, { headers: bearer(owner) })).body).toEqual(created);
  });

  test("PUT on an unknown program is 404 for the program, whatever the body's configuration", async () => {
    const res = await app.request("PUT", `/v1/widget-programs/${UNKNOWN_ID}`, { headers: bearer(owner), body: body({ merchantConfigId: UNKNOWN_ID }) });
    expect(res.status).toBe(404);
    expect(res.body.message).toBe("Widget program not found");
  });

  test("pagination parameters are validated", async () => {
    expectFieldErrors(await app.request("GET", "/v1/widget-programs?limit=abc", { headers: bearer(owner) }), "limit");
    expectFieldErrors(await app.request("GET", "/v1/widget-programs?cursor=%00%01", { headers: bearer(owner) }), "cursor");
  });
});

describe("widget programs: security", () => {
  const ROUTES = [
    ["GET", "/v1/widget-programs"],
    ["POST", "/v1/widget-programs"],
    ["GET", `/v1/widget-programs/${UNKNOWN_ID}`],
    ["PUT", `/v1/widget-programs/${UNKNOWN_ID}`],
    ["DELETE", `/v1/widget-programs/${UNKNOWN_ID}`],
  ] as const;
  const withBody = (method: string) => (method === "POST" || method === "PUT" ? body() : undefined);

  test.each(ROUTES)("%s %s without credentials: 401", async (method, path) => {
    expect((await app.request(method, path, { body: withBody(method) })).status).toBe(401);
  });

  test.each(ROUTES)("%s %s with an API key: 401 (dashboard only)", async (method, path) => {
    const res = await app.request(method, path, { headers: { "x-api-key": apiKey }, body: withBody(method) });
    expect(res.status).toBe(401);
    expect(res.body.message).toContain("dashboard session");
  });

  test("a MEMBER may read but not write", async () => {
    const created = (await create()).body;
    expect((await app.request("GET", "/v1/widget-programs", { headers: bearer(member) })).status).toBe(200);
    expect((await app.request("GET", `/v1/widget-programs/${created.id}`, { headers: bearer(member) })).status).toBe(200);
    expect((await create(body(), member)).status).toBe(403);
    const put = await app.request("PUT", `/v1/widget-programs/${created.id}`, { headers: bearer(member), body: body({ name: "Member" }) });
    expect(put.status).toBe(403);
    expect(put.body.error).toBe("Forbidden");
    expect((await app.request("DELETE", `/v1/widget-programs/${created.id}`, { headers: bearer(member) })).status).toBe(403);
    expect((await app.request("GET", `/v1/widget-programs/${created.id}`, { headers: bearer(owner) })).body).toEqual(created);
  });

  test("another tenant's program: 404 on GET, PUT and DELETE, and it stays untouched", async () => {
    const before = (await app.request("GET", `/v1/widget-programs/${other.programId}`, { headers: bearer(other.token) })).body;
    const get = await app.request("GET", `/v1/widget-programs/${other.programId}`, { headers: bearer(owner) });
    expect(get.status).toBe(404);
    expect(get.body.message).toBe("Widget program not found");
    const put = await app.request("PUT", `/v1/widget-programs/${other.programId}`, { headers: bearer(owner), body: body() });
    expect(put.status).toBe(404);
    expect(put.body.message).toBe("Widget program not found");
    expect((await app.request("DELETE", `/v1/widget-programs/${other.programId}`, { headers: bearer(owner) })).status).toBe(404);
    const after = await app.request("GET", `/v1/widget-programs/${other.programId}`, { headers: bearer(other.token) });
    expect(after.status).toBe(200);
    expect(after.body).toEqual(before);
  });

  test("another tenant's merchantConfigId: 404 naming the merchant configuration, on POST and PUT", async () => {
    const post = await create(body({ merchantConfigId: other.config.id }));
    expect(post.status).toBe(404);
    expect(post.body.message).toBe("Merchant configuration not found");
    const mine = (await create()).body;
    const put = await app.request("PUT", `/v1/widget-programs/${mine.id}`, {
      headers: bearer(owner),
      body: body({ merchantConfigId: other.config.id }),
    });
    expect(put.status).toBe(404);
    expect(put.body.message).toBe("Merchant configuration not found");
    expect((await app.request("GET", `/v1/widget-programs/${mine.id}`, { headers: bearer(owner) })).body.merchantConfigId).toBe(polygon.id);
  });

  test("lists show only the caller's programs", async () => {
    const theirs = await app.request("GET", "/v1/widget-programs", { headers: bearer(other.token) });
    expect(theirs.body.data.map((p: { id: string }) => p.id)).toEqual([other.programId]);
    const mine = await app.request("GET", "/v1/widget-programs?limit=100", { headers: bearer(owner) });
    expect(mine.body.data.some((p: { id: string }) => p.id === other.programId)).toBe(false);
  });

  test("the OpenAPI document lists every route with the dashboard session as its security", async () => {
    const doc = (await app.request("GET", "/v1/openapi.json")).body;
    for (const [method, path] of [
      ["get", "/v1/widget-programs"],
      ["post", "/v1/widget-programs"],
      ["get", "/v1/widget-programs/{id}"],
      ["put", "/v1/widget-programs/{id}"],
      ["delete", "/v1/widget-programs/{id}"],
    ] as const) {
      const op = doc.paths[path]?.[method];
      expect(op).toBeDefined();
      expect(op.security).toEqual([{ DashboardSession: [] }]);
      expect(op.responses["401"]).toBeDefined();
      if (method !== "get") expect(op.responses["403"]).toBeDefined();
      if (method === "post" || path.endsWith("{id}")) expect(op.responses["404"]).toBeDefined();
    }
    expect(doc.paths["/v1/widget-programs/{id}"].delete.responses["204"]).toBeDefined();
  });
});

describe("widget programs: robustness", () => {
  test("no request in this file answered 500", () => {
    expect(app.logs.filter((line) => line.includes("unhandled error"))).toEqual([]);
  });
});
