import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { loanProducts } from "../../../../db/schema/loan-products.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";

const PASSWORD = "correct horse battery";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** A valid body; tests override one field at a time. */
const body = (over: Record<string, unknown> = {}) => ({
  network: "BASE",
  stablecoin: "USDC",
  tenures: [15, 7],
  minTicket: "10",
  maxTicket: "500.5",
  gracePeriodDays: 5,
  processingFee: { type: "FIXED", value: "1.5" },
  lateFee: { type: "PERCENTAGE", value: "0.25" },
  ...over,
});

let app: TestApp;
let owner: string;
let admin: string;
let member: string;
let apiKey: string;
let otherOwner: string;
let otherConfigId: string;

async function signUp(email: string) {
  const res = await app.request("POST", "/v1/auth/signup", { body: { email, password: PASSWORD, companyName: "Acme" } });
  expect(res.status).toBe(201);
  return res.body.accessToken as string;
}

async function addUser(ownerToken: string, email: string, role: "ADMIN" | "MEMBER") {
  const created = await app.request("POST", "/v1/users", { headers: bearer(ownerToken), body: { email, password: PASSWORD, role } });
  expect(created.status).toBe(201);
  const login = await app.request("POST", "/v1/auth/login", { body: { email, password: PASSWORD } });
  expect(login.status).toBe(200);
  return login.body.accessToken as string;
}

beforeAll(async () => {
  app = await createTestApp();
  owner = await signUp("owner@acme.example");
  admin = await addUser(owner, "admin@acme.example", "ADMIN");
  member = await addUser(owner, "member@acme.example", "MEMBER");
  apiKey = (await app.request("POST", "/v1/api-keys", { headers: bearer(owner), body: { name: "backend" } })).body.key;
  otherOwner = await signUp("owner@other.example");
  otherConfigId = (await app.request("GET", "/v1/merchant-configs", { headers: bearer(otherOwner) })).body.data[0].id;
});

afterAll(() => app.close());

const expectFieldErrors = (res: { status: number; body: any }, ...fields: string[]) => {
  expect(res.status).toBe(400);
  expect(res.body.statusCode).toBe(400);
  expect(res.body.error).toBe("Bad Request");
  expect(Array.isArray(res.body.message)).toBe(true);
  for (const field of fields) {
    expect(res.body.message.some((m: string) => m.startsWith(`${field}: `))).toBe(true);
  }
};

describe("merchant configurations: happy path", () => {
  test("signup's configuration is listed with its loan product, amounts with 2 decimals", async () => {
    const res = await app.request("GET", "/v1/merchant-configs", { headers: bearer(otherOwner) });
    expect(res.status).toBe(200);
    expect(res.body.nextCursor).toBeNull();
    expect(res.body.data).toHaveLength(1);
    const [config] = res.body.data;
    expect(config).toEqual({
      id: expect.stringMatching(UUID),
      network: "POLYGON",
      stablecoin: "USDC",
      chain: "POLYGON_AMOY",
      tenures: [3, 7, 15],
      minTicket: "10.00",
      maxTicket: "1000.00",
      gracePeriodDays: 3,
      processingFee: { type: "PERCENTAGE", value: "2.00" },
      lateFee: { type: "FIXED", value: "1.00" },
      loanProductId: expect.stringMatching(UUID),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
  });

  test("POST creates a configuration and its active loan product", async () => {
    const now = app.clock.now().toISOString();
    const res = await app.request("POST", "/v1/merchant-configs", { headers: bearer(owner), body: body() });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID),
      network: "BASE",
      stablecoin: "USDC",
      chain: "BASE_SEPOLIA",
      tenures: [7, 15],
      minTicket: "10.00",
      maxTicket: "500.50",
      gracePeriodDays: 5,
      processingFee: { type: "FIXED", value: "1.50" },
      lateFee: { type: "PERCENTAGE", value: "0.25" },
      loanProductId: expect.stringMatching(UUID),
      createdAt: now,
      updatedAt: now,
    });
    const [product] = await app.db.select().from(loanProducts).where(eq(loanProducts.id, res.body.loanProductId));
    expect(product).toMatchObject({
      merchantConfigId: res.body.id,
      status: "ACTIVE",
      network: "BASE",
      stablecoin: "USDC",
      tenures: [7, 15],
      minTicket: 10_000_000n,
      maxTicket: 500_500_000n,
      gracePeriodDays: 5,
      processingFeeType: "FIXED",
      processingFeeValue: 1_500_000n,
      lateFeeType: "PERCENTAGE",
      lateFeeValue: 250_000n,
    });

    const got = await app.request("GET", `/v1/merchant-configs/${res.body.id}`, { headers: bearer(owner) });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  test("an ADMIN may create; the list is newest first and pages with a cursor", async () => {
    const fresh = await createTestApp();
    try {
      const token = (await fresh.request("POST", "/v1/auth/signup", { body: { email: "o@p.example", password: PASSWORD, companyName: "P" } })).body.accessToken;
      await fresh.request("POST", "/v1/users", { headers: bearer(token), body: { email: "a@p.example", password: PASSWORD, role: "ADMIN" } });
      const adminToken = (await fresh.request("POST", "/v1/auth/login", { body: { email: "a@p.example", password: PASSWORD } })).body.accessToken;
      const ids: string[] = [(await fresh.request("GET", "/v1/merchant-configs", { headers: bearer(token) })).body.data[0].id];
      for (const network of ["TON", "BASE"] as const) {
        fresh.clock.advance(1000);
        const res = await fresh.request("POST", "/v1/merchant-configs", {
          headers: bearer(adminToken),
          body: body({ network, stablecoin: network === "TON" ? "USDT" : "USDC" }),
        });
        expect(res.status).toBe(201);
        ids.push(res.body.id);
      }
      const first = await fresh.request("GET", "/v1/merchant-configs?limit=2", { headers: bearer(token) });
      expect(first.body.data.map((c: { id: string }) => c.id)).toEqual([ids[2], ids[1]]);
      expect(first.body.data[1].chain).toBe("TON_TESTNET");
      expect(first.body.nextCursor).toEqual(expect.any(String));
      const second = await fresh.request("GET", `/v1/merchant-configs?limit=2&cursor=${first.body.nextCursor}`, { headers: bearer(token) });
      expect(second.body.data.map((c: { id: string }) => c.id)).toEqual([ids[0]]);
      expect(second.body.nextCursor).toBeNull();
    } finally {
      fresh.close();
    }
  });

  test("PUT replaces the terms and synchronizes the same loan product", async () => {
    const created = (await app.request("POST", "/v1/merchant-configs", { headers: bearer(owner), body: body() })).body;
    app.clock.advance(60_000);
    const res = await app.request("PUT", `/v1/merchant-configs/${created.id}`, {
      headers: bearer(admin),
      body: {
        network: "TON",
        stablecoin: "USDT",
        tenures: [3],
        minTicket: "5",
        maxTicket: "250.00",
        gracePeriodDays: 10,
        processingFee: { type: "PERCENTAGE", value: "3.5" },
        lateFee: { type: "FIXED", value: "0" },
      },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: created.id,
      network: "TON",
      stablecoin: "USDT",
      chain: "TON_TESTNET",
      tenures: [3],
      minTicket: "5.00",
      maxTicket: "250.00",
      gracePeriodDays: 10,
      processingFee: { type: "PERCENTAGE", value: "3.50" },
      lateFee: { type: "FIXED", value: "0.00" },
      loanProductId: created.loanProductId,
      createdAt: created.createdAt,
      updatedAt: app.clock.now().toISOString(),
    });
    const products = await app.db.select().from(loanProducts).where(eq(loanProducts.merchantConfigId, created.id));
    expect(products).toHaveLength(1);
    expect(products[0]).toMatchObject({
      id: created.loanProductId,
      status: "ACTIVE",
      network: "TON",
      stablecoin: "USDT",
      tenures: [3],
      minTicket: 5_000_000n,
      maxTicket: 250_000_000n,
      gracePeriodDays: 10,
      processingFeeType: "PERCENTAGE",
      processingFeeValue: 3_500_000n,
      lateFeeType: "FIXED",
      lateFeeValue: 0n,
      updatedAt: app.clock.now(),
    });
    const me = await app.request("GET", "/v1/me", { headers: bearer(owner) });
    expect(me.body.merchantConfigs.find((c: { id: string }) => c.id === created.id)).toEqual(res.body);
  });

  test("changing a configuration's rail changes the rail of its widget programs", async () => {
    const config = (await app.request("POST", "/v1/merchant-configs", { headers: bearer(owner), body: body() })).body;
    const program = await app.request("POST", "/v1/widget-programs", {
      headers: bearer(owner),
      body: { name: "Rail follower", merchantConfigId: config.id, allowedOrigins: ["https://shop.example.com"] },
    });
    expect(program.status).toBe(201);
    expect(program.body).toMatchObject({ network: "BASE", stablecoin: "USDC", loanProductId: config.loanProductId });

    const put = await app.request("PUT", `/v1/merchant-configs/${config.id}`, {
      headers: bearer(owner),
      body: body({ network: "TON", stablecoin: "USDT" }),
    });
    expect(put.status).toBe(200);
    const after = await app.request("GET", `/v1/widget-programs/${program.body.id}`, { headers: bearer(owner) });
    expect(after.body).toMatchObject({
      network: "TON",
      stablecoin: "USDT",
      loanProductId: config.loanProductId,
      embedKey: program.body.embedKey,
    });
    const me = await app.request("GET", "/v1/me", { headers: bearer(owner) });
    expect(me.body.widgetPrograms.find((p: { id: string }) => p.id === program.body.id)).toMatchObject({
      network: "TON",
      stablecoin: "USDT",
    });
  });

  test("tenure subsets, the 1000.00 cap, grace 0 and 30, a 100% fee are accepted", async () => {
    for (const over of [
      { tenures: [3] },
      { tenures: [7, 3, 15] },
      { maxTicket: "1000.00", minTicket: "1000" },
      { gracePeriodDays: 0 },
      { gracePeriodDays: 30 },
      { processingFee: { type: "PERCENTAGE", value: "100" } },
      { lateFee: { type: "FIXED", value: "1000.00" } },
      { network: "POLYGON", stablecoin: "USDC" },
    ]) {
      const res = await app.request("POST", "/v1/merchant-configs", { headers: bearer(owner), body: body(over) });
      expect(res.status).toBe(201);
    }
  });
});

describe("merchant configurations: errors", () => {
  const post = (b: unknown) => app.request("POST", "/v1/merchant-configs", { headers: bearer(owner), body: b });

  test("malformed JSON", async () => {
    const res = await app.request("POST", "/v1/merchant-configs", {
      headers: { ...bearer(owner), "content-type": "application/json" },
      rawBody: '{"network": "BASE",',
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ statusCode: 400, message: "Malformed JSON in request body", error: "Bad Request" });
  });

  test("every missing field is named", async () => {
    const res = await post({});
    expectFieldErrors(res, "network", "stablecoin", "tenures", "minTicket", "maxTicket", "gracePeriodDays", "processingFee", "lateFee");
    expect(res.body.message).toHaveLength(8);
  });

  test.each([
    ["minTicket as a number", { minTicket: 10 }, "minTicket"],
    ["maxTicket as a number", { maxTicket: 500 }, "maxTicket"],
    ["minTicket with 3 decimals", { minTicket: "10.001" }, "minTicket"],
    ["minTicket with an exponent", { minTicket: "1e1" }, "minTicket"],
    ["minTicket negative", { minTicket: "-10" }, "minTicket"],
    ["minTicket with spaces", { minTicket: " 10" }, "minTicket"],
    ["minTicket empty", { minTicket: "" }, "minTicket"],
    ["an absurdly large maxTicket", { maxTicket: "99999999999999999999999" }, "maxTicket"],
    ["an unknown network", { network: "SOLANA" }, "network"],
    ["a lowercase network", { network: "base" }, "network"],
    ["an unknown stablecoin", { stablecoin: "DAI" }, "stablecoin"],
    ["tenures not an array", { tenures: 7 }, "tenures"],
    ["tenures as strings", { tenures: ["7"] }, "tenures.0"],
    ["a fractional tenure", { tenures: [7.5] }, "tenures.0"],
    ["more than 3 tenures", { tenures: [3, 7, 15, 3] }, "tenures"],
    ["grace as a string", { gracePeriodDays: "3" }, "gracePeriodDays"],
    ["a fractional grace", { gracePeriodDays: 1.5 }, "gracePeriodDays"],
    ["an unknown fee type", { processingFee: { type: "FLAT", value: "1.00" } }, "processingFee.type"],
    ["a fee value as a number", { lateFee: { type: "FIXED", value: 1 } }, "lateFee.value"],
    ["a fee value with a percent sign", { processingFee: { type: "PERCENTAGE", value: "2%" } }, "processingFee.value"],
    ["a fee without its value", { processingFee: { type: "FIXED" } }, "processingFee.value"],
    ["a fee as a string", { lateFee: "1.00" }, "lateFee"],
  ])("shape: %s", async (_name, over, field) => {
    expectFieldErrors(await post(body(over)), field);
  });

  test.each([
    ["a mixed rail TON/USDC", { network: "TON", stablecoin: "USDC" }, "stablecoin"],
    ["a mixed rail POLYGON/USDT", { network: "POLYGON", stablecoin: "USDT" }, "stablecoin"],
    ["a tenure of 5", { tenures: [5] }, "tenures"],
    ["no tenure", { tenures: [] }, "tenures"],
    ["a repeated tenure", { tenures: [7, 7] }, "tenures"],
    ["a max ticket of 1000.01", { maxTicket: "1000.01" }, "maxTicket"],
    ["a min ticket of 0", { minTicket: "0.00" }, "minTicket"],
    ["min above max", { minTicket: "600", maxTicket: "500" }, "minTicket"],
    ["a grace of 31", { gracePeriodDays: 31 }, "gracePeriodDays"],
    ["a negative grace", { gracePeriodDays: -1 }, "gracePeriodDays"],
    ["a percentage fee above 100", { processingFee: { type: "PERCENTAGE", value: "100.01" } }, "processingFee.value"],
    ["a fixed fee above 1000.00", { lateFee: { type: "FIXED", value: "1000.01" } }, "lateFee.value"],
  ])("domain rule: %s", async (_name, over, field) => {
    const res = await post(body(over));
    expectFieldErrors(res, field);
  });

  test("the domain rules report every bad field at once", async () => {
    const res = await post(body({ network: "TON", stablecoin: "USDC", tenures: [5], maxTicket: "1000.01", gracePeriodDays: 31 }));
    expectFieldErrors(res, "stablecoin", "tenures", "maxTicket", "gracePeriodDays");
    expect(res.body.message).toHaveLength(4);
  });

  test("shape errors come first: a bad shape hides the cross-field rules", async () => {
    const res = await post(body({ network: "TON", stablecoin: "USDC", minTicket: 10 }));
    expectFieldErrors(res, "minTicket");
    expect(res.body.message).toHaveLength(1);
  });

  test("a negative or over-precise fee value gets the amount's shape message alone, not 'is too large'; a huge one gets that", async () => {
    for (const value of ["-1.00", "0.005", "1e2"]) {
      const res = await post(body({ lateFee: { type: "FIXED", value } }));
      expect(res.status).toBe(400);
      expect(res.body.message).toEqual(['lateFee.value: must be a decimal string with at most 2 decimals, like "100.00"']);
    }
    const huge = await post(body({ lateFee: { type: "FIXED", value: "9".repeat(20) } }));
    expect(huge.body.message).toEqual(["lateFee.value: is too large"]);
  });

  test.each([
    ["null", null],
    ["an array", [body()]],
    ["a string", "hello"],
    ["a number", 42],
  ])("a body that is %s", async (_n, b) => {
    const res = await post(b);
    expect(res.status).toBe(400);
    expect(res.body.statusCode).toBe(400);
  });

  test("a body without a JSON content type: 415", async () => {
    for (const headers of [bearer(owner), { ...bearer(owner), "content-type": "text/plain" }]) {
      const res = await app.request("POST", "/v1/merchant-configs", { headers, rawBody: JSON.stringify(body()) });
      expect(res.status).toBe(415);
      expect(res.body.statusCode).toBe(415);
    }
  });

  test("hostile values in any field answer 400, never 500", async () => {
    const values = [null, true, -1, 1e308, 2 ** 53 + 1, "", "x".repeat(5000), [], {}, [1e308], ["__proto__"], { __proto__: { a: 1 } }];
    for (const field of Object.keys(body())) {
      for (const value of values) {
        const res = await post(body({ [field]: value }));
        expect(res.status).toBe(400);
      }
    }
  });

  test("PUT applies the same rules and leaves the configuration unchanged", async () => {
    const created = (await post(body())).body;
    const res = await app.request("PUT", `/v1/merchant-configs/${created.id}`, {
      headers: bearer(owner),
      body: body({ network: "TON", stablecoin: "USDC", maxTicket: "1000.01" }),
    });
    expectFieldErrors(res, "stablecoin", "maxTicket");
    const missing = await app.request("PUT", `/v1/merchant-configs/${created.id}`, { headers: bearer(owner), body: { network: "TON" } });
    expectFieldErrors(missing, "stablecoin", "tenures", "lateFee");
    const after = await app.request("GET", `/v1/merchant-configs/${created.id}`, { headers: bearer(owner) });
    expect(after.body).toEqual(created);
  });

  test("pagination parameters are validated", async () => {
    expectFieldErrors(await app.request("GET", "/v1/merchant-configs?limit=0", { headers: bearer(owner) }), "limit");
    expectFieldErrors(await app.request("GET", "/v1/merchant-configs?limit=101", { headers: bearer(owner) }), "limit");
    expectFieldErrors(await app.request("GET", "/v1/merchant-configs?cursor=nope", { headers: bearer(owner) }), "cursor");
  });

  test("an unknown id is 404", async () => {
    const res = await app.request("GET", "/v1/merchant-configs/7d2f4a0e-7c1b-4b8e-9a57-0c6f0c2d9e11", { headers: bearer(owner) });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ statusCode: 404, message: "Merchant configuration not found", error: "Not Found" });
    const notUuid = await app.request("GET", "/v1/merchant-configs/not-a-uuid", { headers: bearer(owner) });
    expect(notUuid.status).toBe(404);
  });
});

describe("merchant configurations: security", () => {
  const ROUTES = [
    ["GET", "/v1/merchant-configs"],
    ["POST", "/v1/merchant-configs"],
    ["GET", "/v1/merchant-configs/7d2f4a0e-7c1b-4b8e-9a57-0c6f0c2d9e11"],
    ["PUT", "/v1/merchant-configs/7d2f4a0e-7c1b-4b8e-9a57-0c6f0c2d9e11"],
  ] as const;

  test.each(ROUTES)("%s %s without credentials: 401", async (method, path) => {
    const res = await app.request(method, path, { body: method === "GET" ? undefined : body() });
    expect(res.status).toBe(401);
    expect(res.body.statusCode).toBe(401);
  });

  test.each(ROUTES)("%s %s with an API key: 401 (dashboard only)", async (method, path) => {
    const res = await app.request(method, path, { headers: { "x-api-key": apiKey }, body: method === "GET" ? undefined : body() });
    expect(res.status).toBe(401);
    expect(res.body.message).toContain("dashboard session");
  });

  test.each(ROUTES)("%s %s with a forged token: 401", async (method, path) => {
    const res = await app.request(method, path, { headers: bearer("not.a.jwt"), body: method === "GET" ? undefined : body() });
    expect(res.status).toBe(401);
  });

  test("a MEMBER may read but not write", async () => {
    const created = (await app.request("POST", "/v1/merchant-configs", { headers: bearer(owner), body: body() })).body;
    expect((await app.request("GET", "/v1/merchant-configs", { headers: bearer(member) })).status).toBe(200);
    expect((await app.request("GET", `/v1/merchant-configs/${created.id}`, { headers: bearer(member) })).status).toBe(200);
    const postRes = await app.request("POST", "/v1/merchant-configs", { headers: bearer(member), body: body() });
    expect(postRes.status).toBe(403);
    expect(postRes.body.error).toBe("Forbidden");
    const putRes = await app.request("PUT", `/v1/merchant-configs/${created.id}`, {
      headers: bearer(member),
      body: body({ gracePeriodDays: 9 }),
    });
    expect(putRes.status).toBe(403);
    const after = await app.request("GET", `/v1/merchant-configs/${created.id}`, { headers: bearer(owner) });
    expect(after.body.gracePeriodDays).toBe(5);
  });

  test("a MEMBER's invalid write is 403, not 400: the role is checked first", async () => {
    expect((await app.request("POST", "/v1/merchant-configs", { headers: bearer(member), body: {} })).status).toBe(403);
  });

  test("another tenant's configuration: 404 on GET and PUT, and it stays unchanged", async () => {
    const get = await app.request("GET", `/v1/merchant-configs/${otherConfigId}`, { headers: bearer(owner) });
    expect(get.status).toBe(404);
    expect(get.body.message).toBe("Merchant configuration not found");
    const put = await app.request("PUT", `/v1/merchant-configs/${otherConfigId}`, { headers: bearer(owner), body: body() });
    expect(put.status).toBe(404);
    const theirs = await app.request("GET", `/v1/merchant-configs/${otherConfigId}`, { headers: bearer(otherOwner) });
    expect(theirs.body).toMatchObject({ network: "POLYGON", maxTicket: "1000.00", gracePeriodDays: 3 });
  });

  test("lists show only the caller's configurations", async () => {
    const mine = await app.request("GET", "/v1/merchant-configs?limit=100", { headers: bearer(owner) });
    expect(mine.body.data.some((c: { id: string }) => c.id === otherConfigId)).toBe(false);
    const theirs = await app.request("GET", "/v1/merchant-configs", { headers: bearer(otherOwner) });
    expect(theirs.body.data.map((c: { id: string }) => c.id)).toEqual([otherConfigId]);
  });

  test("the OpenAPI document lists every route with the dashboard session as its security", async () => {
    const doc = (await app.request("GET", "/v1/openapi.json")).body;
    for (const [method, path] of [
      ["get", "/v1/merchant-configs"],
      ["post", "/v1/merchant-configs"],
      ["get", "/v1/merchant-configs/{id}"],
      ["put", "/v1/merchant-configs/{id}"],
    ]) {
      const op = doc.paths[path!]?.[method!];
      expect(op).toBeDefined();
      expect(op.security).toEqual([{ DashboardSession: [] }]);
      expect(op.responses["401"]).toBeDefined();
      if (method !== "get") expect(op.responses["403"]).toBeDefined();
      if (method !== "get") expect(op.responses["400"]).toBeDefined();
      if (path!.endsWith("{id}")) expect(op.responses["404"]).toBeDefined();
    }
  });
});

describe("merchant configurations: robustness", () => {
  test("no request in this file answered 500", () => {
    expect(app.logs.filter((line) => line.includes("unhandled error"))).toEqual([]);
  });
});
