import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { defineEmbedRoute } from "../embed-route.ts";
import { widgetConfigView } from "../../../../shared/embed/config-view.ts";
import type { EmbedAppEnv } from "../../env.ts";
import { EMBED_ERRORS, KeyParams } from "../params.ts";

export const route = defineEmbedRoute({
  method: "get",
  path: "/v1/embed/{embedKey}/config",
  operationId: "embed.config",
  summary: "Widget configuration",
  description: `Branding, "Powered by" line, rail, tenures and amount limits of the embed key's program. ${EMBED_ERRORS}`,
  request: { params: KeyParams },
  responses: {
    200: {
      description: "The program's configuration",
      content: { "application/json": { schema: z.object({ program: z.object({ id: z.string(), name: z.string() }) }).passthrough() } },
    },
  },
});

export const register = (app: OpenAPIHono<EmbedAppEnv>) => app.openapi(route, (c) => c.json(widgetConfigView(c.get("program")), 200));
