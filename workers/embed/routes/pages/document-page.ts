import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { EmbedAppEnv } from "../../env.ts";

const ErrorBody = z.object({ statusCode: z.number(), message: z.union([z.string(), z.array(z.string())]), error: z.string() });

/**
 * Lists a widget page (HTML, script or asset served by a plain route) in the
 * embed worker's OpenAPI document, with its parameters, content type and the
 * error body of a 404.
 */
export function documentPage(
  app: OpenAPIHono<EmbedAppEnv>,
  page: {
    path: string;
    /** `embed.<name>`: stable, written out (generated clients name their methods after it). */
    operationId: string;
    summary: string;
    description: string;
    contentType: string;
    params?: z.ZodObject;
    query?: z.ZodObject;
    notFound?: string;
  },
): void {
  app.openAPIRegistry.registerPath({
    method: "get",
    path: page.path,
    operationId: page.operationId,
    tags: ["Widget pages"],
    // Public: the pages are what a borrower's browser loads.
    security: [],
    summary: page.summary,
    description: page.description,
    request: { ...(page.params ? { params: page.params } : {}), ...(page.query ? { query: page.query } : {}) },
    responses: {
      200: { description: page.summary, content: { [page.contentType]: { schema: z.string() } } },
      ...(page.notFound ? { 404: { description: page.notFound, content: { "application/json": { schema: ErrorBody } } } } : {}),
      // Pages under /embed/{embedKey}: limited per key and IP, and per IP once its 404s pass the miss budget (embed-limits.ts).
      ...(page.path.startsWith("/embed/{embedKey}")
        ? {
            429: {
              description: "Rate limited per embed key and client IP, or the IP's 404s passed 60 a minute; see Retry-After",
              content: { "application/json": { schema: ErrorBody } },
            },
          }
        : {}),
    },
  });
}
