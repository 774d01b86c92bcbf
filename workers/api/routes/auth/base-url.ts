import type { Context } from "hono";
import { ConfigurationError } from "../../../../shared/config/required-secrets.ts";
import type { AppEnv } from "../../context.ts";

/**
 * `{base_url}` for links in e-mail (verification, release): the configured
 * `BASE_URL`. Only under development (`npm run dev`, the tests) does the
 * origin this request reached stand in for it: that origin comes from the
 * Host header, which whoever sends the request chooses, so a deployment
 * would mail a link to their origin. A deployment without `BASE_URL`
 * answers 503 naming it (`ConfigurationError`); the routes ask for it
 * before they write or send anything.
 */
export const baseUrlOf = (c: Context<AppEnv>): string => {
  const { baseUrl, environment } = c.get("deps");
  if (baseUrl) return baseUrl;
  if (environment !== "development") {
    throw new ConfigurationError(
      "This worker is not configured: missing var BASE_URL, the origin of links in e-mail (e.g. https://api.example.com; npm run configure writes it)",
    );
  }
  return new URL(c.req.url).origin;
};
