import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createApiApp, MAX_BODY_BYTES } from "./app.ts";
import { DRAIN_TIMEOUT_MS } from "../../shared/http/body-limit.ts";
import type { ApiEnv } from "./deps.ts";
import { createTestApp, type TestApp } from "../../shared/testing/harness.ts";
import { bearer, createKey, PASSWORD, signUpTenant } from "../../shared/testing/fixtures.ts";
import { apiKey, sandboxTenant } from "../../shared/testing/loan-fixtures.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe("errors always have the spec's body", () => {
  test("unknown route: 404", async () => {
    const res = await t.request("GET", "/v1/nothing-here");
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ statusCode: 404, message: "No route for GET /v1/nothing-here", error: "Not Found" });
  });

  test("wrong method on a known route: 405 with Allow", async () => {
    const res = await t.request("DELETE", "/v1/me");
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET");
    expect(res.body).toEqual({ statusCode: 405, message: "Method DELETE is not allowed on /v1/me", error: "Method Not Allowed" });
    const withParam = await t.request("PATCH", "/v1/api-keys/abc");
    expect(withParam.status).toBe(405);
    expect(withParam.headers.get("allow")).toBe("DELETE");
  });

  test("a known route with a trailing slash: 404, not a 405 that allows the method sent", async () => {
    for (const [method, path] of [
      ["GET", "/v1/loans/"],
      ["POST", "/v1/loans/"],
      ["GET", "/v1/me/"],
    ] as const) {
      const res = await t.request(method, path);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ statusCode: 404, message: `No route for ${method} ${path}`, error: "Not Found" });
    }
  });

  test("malformed JSON: 400", async () => {
    const res = await t.request("POST", "/v1/auth/login", { rawBody: '{"email": ', headers: { "content-type": "application/json" } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ statusCode: 400, message: "Malformed JSON in request body", error: "Bad Request" });
  });

  test("a JSON body that is not UTF-8: 400 as malformed JSON, nothing stored (the bytes were read as U+FFFD, and a loan kept a borrowerRef no merchant could match)", async () => {
    const m = await sandboxTenant(t);
    const prefix = new TextEncoder().encode(
      `{"loanProductId":"${m.loanProductId}","borrowerWalletAddress":"0x000000000000000000000000000000000000dEaD","chain":"POLYGON_AMOY","principalAmount":"20.00","idempotencyKey":"utf8-${crypto.randomUUID()}","borrowerRef":"ref-`,
    );
    const raw = new Uint8Array([...prefix, 0xff, 0xfe, ...new TextEncoder().encode('"}')]);
    const res = await t.request("POST", "/v1/loans", { rawBody: raw, headers: { "content-type": "application/json", ...apiKey(m.key) } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ statusCode: 400, message: "Malformed JSON in request body", error: "Bad Request" });
    expect((await t.request("GET", "/v1/loans", { headers: apiKey(m.key) })).body.data).toEqual([]);
    // The same body in UTF-8 (the bytes of "é") goes through.
    const ok = new Uint8Array([...prefix, 0xc3, 0xa9, ...new TextEncoder().encode('"}')]);
    expect((await t.request("POST", "/v1/loans", { rawBody: ok, headers: { "content-type": "application/json", ...apiKey(m.key) } })).status).toBe(201);
  });

  test("a body that is not JSON: 415 with the error body", async () => {
    const res = await t.request("POST", "/v1/auth/login", { rawBody: "email=a", headers: { "content-type": "text/plain" } });
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ statusCode: 415, message: expect.any(String), error: "Unsupported Media Type" });
  });

  test("no content-type and no body: 400 naming the missing fields", async () => {
    const res = await t.request("POST", "/v1/auth/login");
    expect(res.status).toBe(400);
    expect(res.body.message).toEqual(expect.arrayContaining([expect.stringMatching(/^email:/), expect.stringMatching(/^password:/)]));
  });

  test("a JSON array or null where an object is expected: 400", async () => {
    for (const raw of ["[]", "null", '"x"', "1"]) {
      const res = await t.request("POST", "/v1/auth/login", { rawBody: raw, headers: { "content-type": "application/json" } });
      expect(res.status).toBe(400);
      expect(res.body.statusCode).toBe(400);
    }
  });

  test("wrong types and missing fields are named", async () => {
    const res = await t.request("POST", "/v1/auth/signup", { body: { email: 5, password: true } });
    expect(res.status).toBe(400);
    expect(res.body.message).toHaveLength(3);
    expect(res.body.message.map((m: string) => m.split(":")[0]).sort()).toEqual(["companyName", "email", "password"]);
  });

  test("a body over the limit: 413", async () => {
    const res = await t.request("POST", "/v1/auth/login", {
      rawBody: JSON.stringify({ email: "a".repeat(MAX_BODY_BYTES), password: "x" }),
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ statusCode: 413, message: `Request body exceeds ${MAX_BODY_BYTES} bytes`, error: "Payload Too Large" });
  });

  test("a JSON body that is not UTF-8 is judged after routing and credentials: 404 unknown route, 405 wrong method, 401 without a key", async () => {
    const raw = new Uint8Array([...new TextEncoder().encode('{"a":"'), 0xff, ...new TextEncoder().encode('"}')]);
    const send = (method: string, path: string, headers: Record<string, string> = {}) =>
      t.request(method, path, { rawBody: raw, headers: { "content-type": "application/json", ...headers } });
    expect((await send("POST", "/v1/nothing-here")).status).toBe(404);
    expect((await send("POST", "/v1/health")).status).toBe(405);
    const noKey = await send("POST", "/v1/loans");
    expect(noKey.status).toBe(401);
    expect(noKey.body).toMatchObject({ statusCode: 401, error: "Unauthorized" });
  });

  test("a path that is not valid percent-encoded UTF-8: 400 (it was read as its literal text, another borrower's ref)", async () => {
    const m = await sandboxTenant(t);
    const literal = await t.request("PATCH", "/v1/borrowers/%25ED%25A0%2580/kyc", {
      body: { status: "VERIFIED", merchantUserId: "u" },
      headers: apiKey(m.key),
    });
    expect(literal.status).toBe(200);
    for (const path of ["/v1/borrowers/%ED%A0%80", "/v1/borrowers/%FF", "/v1/borrowers/%E2%82"]) {
      const res = await t.request("GET", path, { headers: apiKey(m.key) });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ statusCode: 400, message: "The request path is not valid percent-encoded UTF-8", error: "Bad Request" });
    }
    // Valid escapes still name what they encode.
    expect((await t.request("GET", "/v1/borrowers/%25ED%25A0%2580", { headers: apiKey(m.key) })).body.borrowerRef).toBe("%ED%A0%80");
  });

  test("a body with a Content-Encoding other than identity: 415 with Accept-Encoding: identity, nothing read", async () => {
    const m = await sandboxTenant(t);
    const body = JSON.stringify({ name: "compressed" });
    for (const coding of ["gzip", "br", "deflate, gzip"]) {
      const res = await t.request("POST", "/v1/api-keys", {
        rawBody: body,
        headers: { "content-type": "application/json", "content-encoding": coding, ...bearer(m.token) },
      });
      expect(res.status).toBe(415);
      expect(res.headers.get("accept-encoding")).toBe("identity");
      expect(res.body).toEqual({
        statusCode: 415,
        message: `Content-Encoding ${coding} is not supported: send the request body uncompressed`,
        error: "Unsupported Media Type",
      });
    }
    const plain = await t.request("POST", "/v1/api-keys", {
      rawBody: body,
      headers: { "content-type": "application/json", "content-encoding": "identity", ...bearer(m.token) },
    });
    expect(plain.status).toBe(201);
  });

  test("a declared oversized body that never comes: GET answered 413 at once, POST once the drain gives up", async () => {
    const get = await t.app.request("/v1/health", { headers: { "content-length": "500000" } }, {} as ApiEnv);
    expect(get.status).toBe(413);
    const stalled = new ReadableStream<Uint8Array>({ start() {} });
    const started = Date.now();
    const post = await t.app.request(
      "/v1/auth/login",
      { method: "POST", body: stalled, headers: { "content-type": "application/json", "content-length": "500000" }, duplex: "half" } as RequestInit,
      {} as ApiEnv,
    );
    expect(post.status).toBe(413);
    expect(Date.now() - started).toBeGreaterThanOrEqual(DRAIN_TIMEOUT_MS - 100);
  }, 20_000);

  test("an unexpected exception: 500 without internals", async () => {
    const logged: string[] = [];
    const original = console.error;
    console.error = (line: string) => logged.push(line);
    try {
      const app = createApiApp(() => {
        throw new Error("db password is hunter2");
      });
      const res = await app.request("/v1/me", {}, {} as ApiEnv);
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ statusCode: 500, message: "Internal server error", error: "Internal Server Error" });
      expect(res.headers.get("x-request-id")).toBeTruthy();
    } finally {
      console.error = original;
    }
    expect(logged.join("\n")).toContain("unhandled error");
  });
});

describe("x-request-id", () => {
  test("on success and on every error", async () => {
    for (const [m, p] of [
      ["GET", "/v1/health"],
      ["GET", "/nowhere"],
      ["GET", "/v1/me"],
      ["PUT", "/v1/health"],
    ] as const) {
      const res = await t.request(m, p);
      expect(res.headers.get("x-request-id")).toMatch(/^[\w-]{8,}$/);
    }
  });
  test("a caller's id is echoed", async () => {
    const res = await t.request("GET", "/v1/health", { headers: { "x-request-id": "trace-abc-123" } });
    expect(res.headers.get("x-request-id")).toBe("trace-abc-123");
  });
});

describe("OpenAPI", () => {
  test("3.1 document lists every route with its auth and errors", async () => {
    const res = await t.request("GET", "/v1/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
    expect(res.body.components.securitySchemes.ApiKey).toEqual(expect.objectContaining({ type: "apiKey", in: "header", name: "x-api-key" }));
    expect(res.body.components.securitySchemes.DashboardSession).toEqual(expect.objectContaining({ type: "http", scheme: "bearer" }));
    const expected: [string, string, string[]][] = [
      ["post", "/v1/auth/signup", []],
      ["post", "/v1/auth/login", []],
      ["get", "/v1/me", ["ApiKey", "DashboardSession"]],
      ["post", "/v1/users", ["DashboardSession"]],
      ["post", "/v1/api-keys", ["DashboardSession"]],
      ["get", "/v1/api-keys", ["DashboardSession"]],
      ["delete", "/v1/api-keys/{id}", ["DashboardSession"]],
    ];
    for (const [method, path, schemes] of expected) {
      const op = res.body.paths[path]?.[method];
      expect(op).toBeDefined();
      expect(op.security.flatMap((s: object) => Object.keys(s))).toEqual(schemes);
      expect(op.description).toContain("**Auth:**");
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(schemes.length ? ["401", "429", "500"] : ["400", "429", "500"]));
    }
    // Every operation documents its errors with the error body.
    for (const [path, ops] of Object.entries(res.body.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(ops)) {
        expect(op.responses["500"]?.content?.["application/json"]?.schema?.$ref, `${method} ${path}`).toBe("#/components/schemas/Error");
      }
    }
  });

  test("interactive docs at /docs", async () => {
    const res = await t.request("GET", "/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(String(res.body)).toContain("/v1/openapi.json");
  });
});

describe("secrets", () => {
  test("passwords, keys and tokens never reach the logs", async () => {
    const owner = await signUpTenant(t);
    const { key } = await createKey(t, owner.token);
    await t.request("GET", "/v1/me", { headers: { "x-api-key": key } });
    await t.request("POST", "/v1/auth/login", { body: { email: owner.email, password: "wrong-password-123" } });
    const logs = t.logs.join("\n");
    for (const secret of [PASSWORD, "wrong-password-123", key, owner.token]) expect(logs).not.toContain(secret);
  });
});
