import type { Hono } from "hono";
import type { EmbedAppEnv } from "../../env.ts";

/** Liveness of the widget host (`{embed_url}/health`); touches no database. */
export const register = (app: Hono<EmbedAppEnv>) =>
  app.get("/health", (c) => c.json({ status: "ok" as const, service: "embed" as const }, 200));
