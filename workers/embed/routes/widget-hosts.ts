import type { Context } from "hono";
import type { EmbedAppEnv } from "../env.ts";

/**
 * The widget's own hosts, the domains a TON Connect signature may name
 * besides the program's origins: EMBED_HOST and the host this request reached
 * (what the widget's TON Connect manifest names).
 */
export const widgetHostsOf = (c: Context<EmbedAppEnv>): string[] => {
  const { widgetHost } = c.get("deps");
  return [new URL(c.req.url).host, ...(widgetHost ? [widgetHost] : [])];
};
