import type { OpenAPIHono } from "@hono/zod-openapi";
import type { EmbedAppEnv } from "../../env.ts";
import { documentPage } from "./document-page.ts";
import { WIDGET_SCRIPT } from "../../pages/widget-script.ts";

/** `{embed_url}/widget.js`: public, cacheable for five minutes, served to any page. */
export const register = (app: OpenAPIHono<EmbedAppEnv>) => {
  documentPage(app, {
    path: "/widget.js",
    operationId: "embed.widgetScript",
    summary: "The widget launcher",
    // In words, not as markup: a script tag in a description is unsafe markdown to doc renderers (redocly no-unsafe-markdown).
    description:
      'A script element with `src="{embed_url}/widget.js"`, `data-embed-key="…"` and `data-channel="WEB"`: mounts the iframe, resizes it, relays its svc:* messages as DOM events and passes svc:kyc-complete back. Under 1 KB gzipped.',
    contentType: "text/javascript",
  });
  return app.get("/widget.js", (c) =>
    c.body(WIDGET_SCRIPT, 200, {
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": "public, max-age=300",
      "x-content-type-options": "nosniff",
      "cross-origin-resource-policy": "cross-origin",
    }),
  );
};
