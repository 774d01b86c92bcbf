import { createRoute, type RouteConfig } from "@hono/zod-openapi";
import { ErrorBodySchema } from "../../../shared/schemas/common.ts";

const ERROR_TEXT: Record<number, string> = {
  400: "Validation failure (message: one string per bad field) or malformed JSON",
  401: "Not authorized",
  403: "A browser Origin not among the program's allowed origins (no CORS grant)",
  404: "Unknown or deleted embed key, or a loan not of this program",
  409: "Conflict with the resource's current state",
  413: "Body over 64 KiB",
  415: "A body that is not `application/json`",
  429: "Rate limited per embed key and client IP, or the IP's 404s passed 60 a minute; see Retry-After",
  500: "Service fault",
};

const errorBody = { "application/json": { schema: ErrorBodySchema } };

/**
 * Declares an embed route: public (`security: []`, stated on the operation:
 * the embed key in the path identifies the program and grants nothing else),
 * tagged, with the error responses the worker's middleware and validation can
 * give, each with the error body. As with the api's `defineRoute`, the
 * `operationId` is required and written out, so it survives a path change.
 */
export function defineEmbedRoute<const R extends RouteConfig & { operationId: string }>(
  route: R,
  options: { errors?: number[] } = {},
): R & { getRoutingPath(): string } {
  const statuses = new Set<number>([500, ...(options.errors ?? [])]);
  // Everything under /v1/embed/{embedKey}: the key is looked up (404), the Origin checked (403), the key and IP limited (429).
  if (route.path.startsWith("/v1/embed/")) for (const s of [403, 404, 429]) statuses.add(s);
  if (route.request) statuses.add(400);
  if (route.request?.body) for (const s of [413, 415]) statuses.add(s);
  const responses = { ...route.responses } as RouteConfig["responses"];
  for (const [status, response] of Object.entries(responses)) {
    // A documented error without a body shape (e.g. the wallet session's 401) gets the error body.
    if (Number(status) >= 400 && !("content" in response && response.content)) responses[status] = { ...response, content: errorBody };
  }
  for (const s of [...statuses].sort()) responses[s] ??= { description: ERROR_TEXT[s] ?? "Error", content: errorBody };
  return createRoute({ tags: ["Embed calls"], ...route, security: [], responses });
}
