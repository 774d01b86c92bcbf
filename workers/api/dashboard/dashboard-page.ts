import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { errorBodyForStatus } from "../../../shared/domain/errors.ts";
import type { AppEnv } from "../context.ts";
import { DASHBOARD_APP_ENTRY, DASHBOARD_APP_FILES, DASHBOARD_STYLESHEET } from "./client-assets.generated.ts";

export const DASHBOARD_PATH = "/dashboard";
export const DASHBOARD_ASSETS_PREFIX = "/dashboard-assets/";

/** A fresh nonce per page. */
const newNonce = (): string => btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))));

/**
 * The dashboard's Content-Security-Policy: scripts only with this page's
 * nonce (and what they load, `strict-dynamic`), styles only from ourselves,
 * requests only to this origin (the `/v1` API), frames only from the widget
 * host (the branding preview), never framed itself, no forms posting anywhere
 * but here, no plugins.
 */
export function dashboardCsp(nonce: string, widgetOrigin: string | null): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}' 'strict-dynamic'`,
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    `frame-src ${widgetOrigin ?? "'none'"}`,
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "object-src 'none'",
  ].join("; ");
}

const page = (nonce: string, config: { widgetOrigin: string | null }) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc credit dashboard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${DASHBOARD_ASSETS_PREFIX}${DASHBOARD_STYLESHEET}">
</head>
<body>
<div id="app"><p class="boot">Loading the dashboard…</p></div>
<noscript><p>The dashboard needs JavaScript.</p></noscript>
<script type="application/json" id="dashboard-config">${JSON.stringify(config).replace(/</g, "\\u003c")}</script>
<script type="module" nonce="${nonce}" src="${DASHBOARD_ASSETS_PREFIX}${DASHBOARD_APP_ENTRY}"></script>
</body>
</html>
`;

/**
 * `{base_url}/dashboard` and every path under it: the same page (the app
 * routes in the browser), which talks only to `/v1` with the session's token
 * held in memory (never in storage or a cookie, so no request carries an
 * ambient credential and a cross-site form cannot act for the merchant).
 */
export function registerDashboard(app: OpenAPIHono<AppEnv>): void {
  const serve = (c: Context<AppEnv>) => {
    const nonce = newNonce();
    const widgetHost = c.get("deps").widgetHost;
    const widgetOrigin = widgetHost ? `${new URL(c.req.url).protocol}//${widgetHost}` : null;
    return c.html(page(nonce, { widgetOrigin }), 200, {
      "content-security-policy": dashboardCsp(nonce, widgetOrigin),
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
      "cross-origin-opener-policy": "same-origin",
      "x-frame-options": "DENY",
    });
  };
  app.get(DASHBOARD_PATH, serve);
  app.get(`${DASHBOARD_PATH}/*`, serve);
  app.get(`${DASHBOARD_ASSETS_PREFIX}:name`, (c) => {
    const name = c.req.param("name");
    const body = Object.hasOwn(DASHBOARD_APP_FILES, name) ? DASHBOARD_APP_FILES[name] : undefined;
    if (body === undefined) return c.json(errorBodyForStatus(404, "No such dashboard asset"), 404);
    return c.body(body, 200, {
      "content-type": name.endsWith(".css") ? "text/css; charset=utf-8" : "text/javascript; charset=utf-8",
      "cache-control": "public, max-age=31536000, immutable",
      "x-content-type-options": "nosniff",
    });
  });
}
