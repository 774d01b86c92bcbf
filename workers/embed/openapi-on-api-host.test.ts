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

test("fetched through the api host, the widget pages still go to the widget host (EMBED_HOST; an audit's Try it out got 404), and /v1/embed/* to the api host first (its /docs page may call only its own origin)", async () => {
  const e = createEmbedTestApp(t);
  for (const url of [`https://api.svc-credit.test${EMBED_DOCUMENT_ON_API_HOST}`, "https://embed.svc-credit.test/openapi.json"]) {
    const doc = (await e.request("GET", url)).body;
    expect(doc.servers).toEqual([{ url: "https://embed.svc-credit.test", description: "The widget host ({embed_url}): every path of this document" }]);
    const fetchedFrom = new URL(url).origin;
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { servers?: { url: string; variables?: any }[] }>>)) {
      for (const op of Object.values(item)) {
        if (!path.startsWith("/v1/embed/")) {
          // Widget pages, assets, the manifest, /health: the document's servers only.
          expect(op.servers).toBeUndefined();
          continue;
        }
        // The host the copy came from first: /docs on the api host tries /v1/embed/* calls on its own origin (its CSP).
        const onWidgetHost = fetchedFrom === "https://embed.svc-credit.test";
        expect(op.servers?.map((s) => s.url)).toEqual(
          onWidgetHost ? ["https://embed.svc-credit.test", "{base_url}"] : ["{base_url}", "https://embed.svc-credit.test"],
        );
        expect(op.servers?.find((s) => s.url === "{base_url}")?.variables.base_url.default).toBe(fetchedFrom);
      }
    }
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/widget.js", "/embed/{embedKey}"]));
  }
});
