import type { OpenAPIHono } from "@hono/zod-openapi";
import { errorBodyForStatus } from "../../../shared/domain/errors.ts";
import type { AppEnv } from "../context.ts";
import { DOCS_ASSET_NAMES, DOCS_ASSETS } from "./assets.generated.ts";

export const DOCS_PATH = "/docs";
export const DOCS_ASSETS_PREFIX = "/docs/assets/";

/**
 * The documents the page's top bar selects, both same-origin: the api's own,
 * and the embed worker's, which the api host's `/v1/embed/*` route sends to
 * the embed worker (it serves the same document as `{embed_url}/openapi.json`
 * there), so `connect-src 'self'` covers both and no CORS is involved.
 */
export const DOCS_DOCUMENTS = [
  { name: "svc credit API", url: "/v1/openapi.json" },
  { name: "svc credit embed API (widget)", url: "/v1/embed/openapi.json" },
];

/**
 * The page's policy: nothing but what this worker serves. Scripts from
 * 'self' only (Swagger UI's bundle, its preset and our initializer, no
 * inline script, no eval); styles from 'self' only; images from 'self' and
 * data: URIs (Swagger UI's stylesheet draws its icons as data: SVGs);
 * fetches to 'self' (the two documents and "Try it out" calls); never
 * framed, no plugins, no <base>, forms to 'self'. No fonts: default-src
 * 'none' covers them, and Swagger UI asks for none.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "object-src 'none'",
].join("; ");

const asset = (key: keyof typeof DOCS_ASSET_NAMES) => `${DOCS_ASSETS_PREFIX}${DOCS_ASSET_NAMES[key]}`;

// A JSON data block is not executed, so the CSP's script-src does not apply; `<` is escaped so it cannot close the tag.
const config = JSON.stringify({ title: "svc credit", urls: DOCS_DOCUMENTS }).replace(/</g, "\\u003c");

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc credit API</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${asset("css")}">
</head>
<body>
<div id="swagger-ui"></div>
<script type="application/json" id="docs-config">${config}</script>
<script src="${asset("bundle")}"></script>
<script src="${asset("preset")}"></script>
<script src="${asset("init")}"></script>
</body>
</html>
`;

/**
 * `{base_url}/docs`: Swagger UI over both OpenAPI documents, every file
 * served by this worker from the `swagger-ui-dist` package (see
 * build-assets.ts), so the page works offline and under a strict CSP. The
 * page is revalidated on every load (a deploy changes the asset names); the
 * assets carry their content hash in their names and are cached for a year.
 */
export function registerDocs(app: OpenAPIHono<AppEnv>): void {
  app.get(DOCS_PATH, (c) =>
    c.html(PAGE, 200, {
      "content-security-policy": DOCS_CSP,
      "cache-control": "no-cache",
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
      "cross-origin-opener-policy": "same-origin",
    }),
  );
  app.get(`${DOCS_ASSETS_PREFIX}:name`, (c) => {
    const name = c.req.param("name");
    const file = Object.hasOwn(DOCS_ASSETS, name) ? DOCS_ASSETS[name] : undefined;
    if (!file) return c.json(errorBodyForStatus(404, "No such docs asset"), 404);
    return c.body(file.body, 200, {
      "content-type": file.contentType,
      "cache-control": "public, max-age=31536000, immutable",
      "x-content-type-options": "nosniff",
    });
  });
}
