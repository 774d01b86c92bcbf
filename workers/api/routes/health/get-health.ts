import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

const HealthSchema = z.object({ status: z.literal("ok"), service: z.literal("api"), time: z.string() }).openapi("Health");

export const route = defineRoute(
  { auth: "NONE", rateLimit: false },
  {
    method: "get",
    path: "/v1/health",
    operationId: "health.get",
    tags: ["Platform"],
    summary: "Liveness",
    description: "Answers without touching the database, so load balancers and the local stack can poll it cheaply.",
    responses: { 200: { description: "The worker is up", content: { "application/json": { schema: HealthSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, (c) => c.json({ status: "ok" as const, service: "api" as const, time: new Date().toISOString() }, 200));
