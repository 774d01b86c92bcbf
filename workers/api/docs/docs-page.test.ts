import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { createTestApp, type TestApp } from "../../../shared/testing/harness.ts";
import { DOCS_ASSET_NAMES, DOCS_ASSETS } from "./assets.generated.ts";
import { buildDocsAssets } from "./build-assets.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const SWAGGER_UI = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));

/** A CSP header as directive → sources. */
const parseCsp = (header: string | null) =>
  Object.fromEntries(
    (header ?? "")
      .split(";")
      .map((d) => d.trim().split(/\s+/))
      .map(([name, ...sources]) => [name, sources]),
  );

/** The `src`/`href` of every script and link of the page. */
const referenced = (html: string) => [...html.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);

describe("GET /docs", () => {
  test("an HTML page under a strict CSP, revalidated on every load", async () => {
    const res = await t.request("GET", "/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=UTF-8");
    expect(res.headers.get("cache-control")).toBe("no-cache");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("x-request-id")).toBeTruthy();
    expect(parseCsp(res.headers.get("content-security-policy"))).toEqual({
      "default-src": ["'none'"],
      // No 'unsafe-inline', no 'unsafe-eval', no host: only files this worker serves.
      "script-src": ["'self'"],
      "style-src": ["'self'"],
      "img-src": ["'self'", "data:"],
      "connect-src": ["'self'"],
      "form-action": ["'self'"],
      "frame-ancestors": ["'none'"],
      "base-uri": ["'none'"],
      "object-src": ["'none'"],
    });
  });

  test("loads Swagger UI from this worker only, no inline script, and selects both documents", async () => {
    const html = String((await t.request("GET", "/docs")).body);
    const refs = referenced(html);
    expect(refs).toEqual([
      "data:,",
      `/docs/assets/${DOCS_ASSET_NAMES.css}`,
      `/docs/assets/${DOCS_ASSET_NAMES.bundle}`,
      `/docs/assets/${DOCS_ASSET_NAMES.preset}`,
      `/docs/assets/${DOCS_ASSET_NAMES.init}`,
    ]);
    expect(html).not.toMatch(/https?:\/\//);
    // Every <script> has a src, except the JSON data block (not executed).
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    for (const [, attrs, body] of scripts) expect(attrs!.includes("src=") || (attrs!.includes('type="application/json"') && body !== "")).toBe(true);
    const config = JSON.parse(/<script type="application\/json" id="docs-config">([\s\S]*?)<\/script>/.exec(html)![1]!);
    expect(config.urls).toEqual([
      { name: "svc credit API", url: "/v1/openapi.json" },
      { name: "svc credit embed API (widget)", url: "/v1/embed/openapi.json" },
    ]);
  });
});

describe("GET /docs/assets/:name", () => {
  test("each file as swagger-ui-dist ships it (or our initializer), with its content type, cached for a year", async () => {
    const sources: Record<keyof typeof DOCS_ASSET_NAMES, [string, string]> = {
      css: [join(SWAGGER_UI, "swagger-ui.css"), "text/css; charset=utf-8"],
      bundle: [join(SWAGGER_UI, "swagger-ui-bundle.js"), "text/javascript; charset=utf-8"],
      preset: [join(SWAGGER_UI, "swagger-ui-standalone-preset.js"), "text/javascript; charset=utf-8"],
      init: [join(import.meta.dir, "swagger-init.js"), "text/javascript; charset=utf-8"],
    };
    for (const [key, [file, type]] of Object.entries(sources)) {
      const name = DOCS_ASSET_NAMES[key as keyof typeof DOCS_ASSET_NAMES];
      const res = await t.request("GET", `/docs/assets/${name}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe(type);
      expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      const body = readFileSync(file, "utf8");
      expect(res.body === body).toBe(true);
      // The name carries the content's hash: a new version is a new name, so "immutable" is safe.
      expect(name).toContain(`.${new Bun.CryptoHasher("sha256").update(body).digest("hex").slice(0, 16)}.`);
    }
  });

  test("the stylesheet asks for nothing beyond data: URIs: no external fonts, images or imports", () => {
    const css = DOCS_ASSETS[DOCS_ASSET_NAMES.css]!.body;
    const urls = [...css.matchAll(/url\(\s*["']?([^"')]*)/g)].map((m) => m[1]!);
    expect(urls.length).toBeGreaterThan(0);
    expect(urls.filter((u) => !u.startsWith("data:"))).toEqual([]);
    expect(css).not.toMatch(/@import|@font-face/);
  });

  test("the initializer never sends the documents to Swagger's online validator", () => {
    expect(DOCS_ASSETS[DOCS_ASSET_NAMES.init]!.body).toContain("validatorUrl: null");
  });

  test("an unknown name is 404 with the error body, including names of Object.prototype", async () => {
    for (const name of ["swagger-ui.css", "swagger-ui-bundle.js", "constructor", "__proto__", "toString", "..%2Fdocs", "index.html"]) {
      const res = await t.request("GET", `/docs/assets/${name}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ statusCode: 404, message: "No such docs asset", error: "Not Found" });
    }
  });

  test("the generated module is reproducible: building again changes nothing", async () => {
    const again = await buildDocsAssets();
    expect(again.changed).toBe(false);
    expect(again.files.map((f) => f.name).sort()).toEqual(Object.keys(DOCS_ASSETS).sort());
    // Measured: what the api worker's bundle grows by (Cloudflare compresses the responses on the wire).
    expect(again.files.reduce((sum, f) => sum + f.gzip, 0)).toBeLessThan(700_000);
  });
});
