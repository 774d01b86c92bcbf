import type { Context } from "hono";
import type { AppEnv } from "../../context.ts";

/** `{base_url}` for links in e-mail: the configured `BASE_URL`, else the origin this request reached. */
export const baseUrlOf = (c: Context<AppEnv>): string => c.get("deps").baseUrl ?? new URL(c.req.url).origin;
