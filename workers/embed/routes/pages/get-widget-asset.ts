import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { errorBodyForStatus } from "../../../../shared/domain/errors.ts";
import { WIDGET_APP_FILES } from "../../client-assets.generated.ts";
import type { EmbedAppEnv } from "../../env.ts";
import { documentPage } from "./document-page.ts";
import { WIDGET_ICON_PNG_BASE64 } from "../../pages/widget-icon.ts";

export const ASSET_PREFIX = "/embed-assets/";

/**
 * `{embed_url}/embed-assets/<name>`: the widget app's modules (the entry and
 * its lazily loaded chunks) and `icon.png`. Module names carry their content hash, so they are
 * cached for a year; an unknown name is 404.
 */
const ICON = Uint8Array.from(atob(WIDGET_ICON_PNG_BASE64), (ch) => ch.charCodeAt(0));

export const register = (app: OpenAPIHono<EmbedAppEnv>) => {
  documentPage(app, {
    path: "/embed-assets/{name}",
    operationId: "embed.widgetAsset",
    summary: "Widget app modules",
    description: "The widget app's JavaScript modules (content-hashed names, cached for a year) and icon.png.",
    contentType: "text/javascript",
    params: z.object({ name: z.string().openapi({ param: { name: "name", in: "path" } }) }),
    notFound: "No such asset",
  });
  return app.get(`${ASSET_PREFIX}:name`, (c) => {
    if (c.req.param("name") === "icon.png") {
      return c.body(ICON, 200, { "content-type": "image/png", "cache-control": "public, max-age=86400", "cross-origin-resource-policy": "cross-origin" });
    }
    const body = Object.hasOwn(WIDGET_APP_FILES, c.req.param("name")) ? WIDGET_APP_FILES[c.req.param("name")] : undefined;
    if (body === undefined) return c.json(errorBodyForStatus(404, "No such widget asset"), 404);
    return c.body(body, 200, {
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": "public, max-age=31536000, immutable",
      "x-content-type-options": "nosniff",
    });
  });
};
