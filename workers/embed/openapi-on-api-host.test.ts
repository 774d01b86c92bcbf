import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../shared/testing/harness.ts";
import { EMBED_DOCUMENT_ON_API_HOST } from "./app.ts";
import { createEmbedTestApp } from "./testing/harness.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

test("the embed document is also at /v1/embed/openapi.json (the api host's docs page loads it same-origin)", async () => {
  expect(EMBED_DOCUMENT_ON_API_HOST).toBe("/v1/embed/openapi.json");
  // A miss budget of one: were `openapi.json` taken for an embed key, the first call would be 404 and the second 429.
  const e = createEmbedTestApp(t, { missLimit: 1 });
  const own = await e.request("GET", "/openapi.json");
  expect(own.status).toBe(200);
  for (let i = 0; i < 2; i++) {
    const res = await e.request("GET", EMBED_DOCUMENT_ON_API_HOST);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.headers.get("x-svc-worker")).toBe("embed");
    expect(res.body).toEqual(own.body);
  }
  expect(Object.keys(own.body.paths)).toContain("/v1/embed/{embedKey}/quote");
  // A browser's cross-origin read is not granted: the docs page reads it from its own origin.
  const cross = await e.request("GET", EMBED_DOCUMENT_ON_API_HOST, { headers: { origin: "https://elsewhere.example" } });
  expect(cross.headers.get("access-control-allow-origin")).toBeNull();
});
