import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { defineEmbedRoute } from "../embed-route.ts";
import type { EmbedAppEnv } from "../../env.ts";

export const route = defineEmbedRoute({
  method: "get",
  path: "/health",
  operationId: "embed.health",
  tags: ["Platform"],
  summary: "Liveness of the widget host (`{embed_url}/health`); touches no database.",
  responses: {
    200: {
      description: "The worker is up",
      content: { "application/json": { schema: z.object({ status: z.literal("ok"), service: z.literal("embed") }) } },
    },
  },
});

export const register = (app: OpenAPIHono<EmbedAppEnv>) => app.openapi(route, (c) => c.json({ status: "ok" as const, service: "embed" as const }, 200));
