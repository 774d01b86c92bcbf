/** Bindings and vars of the embed worker (workers/embed/wrangler.toml). */
export type EmbedEnv = {
  DB: D1Database;
  ENVIRONMENT?: string;
};

/** Hono's typed environment for the embed worker. */
export type EmbedAppEnv = {
  Bindings: EmbedEnv;
  Variables: { requestId: string };
};
