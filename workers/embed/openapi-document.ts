import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { EmbedAppEnv } from "./env.ts";

// No public licence: SPDX names an unlisted one with a LicenseRef- identifier (OpenAPI 3.1; the generator's types know only 3.0's `url`).
const LICENSE = { name: "Proprietary: use under the merchant agreement with svc credit", identifier: "LicenseRef-svc-credit-merchant-agreement" };

const EMBED_TAGS = [
  {
    name: "Embed calls",
    description:
      "The widget's calls under `/v1/embed/{embedKey}/…`: public, keyed by the program's embed key (which grants nothing else), limited per key and client IP, answered only to the program's allowed origins.",
  },
  {
    name: "Widget pages",
    description:
      "What a borrower's browser loads from `{embed_url}`: the launcher script, the iframe page, its assets, the repayment page and the TON Connect manifest.",
  },
  { name: "Platform", description: "Liveness of the embed worker." },
];

/**
 * The embed worker's document. Two hosts reach this worker
 * (workers/embed/wrangler.toml): `{embed_url}` for every path, and the api's
 * `{base_url}` for `/v1/embed/*` only; the document is served on both
 * (`{base_url}/v1/embed/openapi.json` for the api's /docs page). So its
 * `servers` is the widget host (`EMBED_HOST`, in the scheme the document was
 * fetched with; without one, the origin it was fetched from), which serves
 * every path, whichever host served the document, and each `/v1/embed/*`
 * operation lists both: the widget host, and `{base_url}` as a server
 * variable whose default is the origin the document was fetched from (the
 * embed worker is not told the api's URL).
 */
export function embedDocument(app: OpenAPIHono<EmbedAppEnv>, c: Context<EmbedAppEnv>) {
  const requested = new URL(c.req.url);
  const { widgetHost } = c.get("deps");
  const widgetOrigin = widgetHost ? `${requested.protocol}//${widgetHost}` : requested.origin;
  const doc = app.getOpenAPI31Document({
    openapi: "3.1.0",
    info: {
      title: "svc credit embed API",
      version: "v1",
      description: [
        "Public widget calls under `{base_url}/v1/embed/:embedKey/…` (served by the embed worker; the embed key identifies the tenant and program and grants nothing else) and the widget's pages on `{embed_url}`. Errors have the body `{ statusCode, message, error }`.",
        "",
        "Servers: every path is served on `{embed_url}`, the widget host; `/v1/embed/*` is also served on the api's host `{base_url}`, which serves this document too, at `/v1/embed/openapi.json`. No operation takes the merchant's credentials (`security: []`); a wallet session, where one is read, is an optional header.",
        "Every operation has a stable `operationId` (`embed.<name>`), unique across this document and the api's.",
      ].join("\n"),
      contact: { name: "svc credit" },
      license: LICENSE,
    },
    servers: [{ url: widgetOrigin, description: "The widget host ({embed_url}): every path of this document" }],
    tags: EMBED_TAGS,
  });
  const widgetServer = { url: widgetOrigin, description: "The widget host ({embed_url})" };
  const apiHost = {
    url: "{base_url}",
    description: "The api's host, whose /v1/embed/* is routed to the embed worker",
    variables: {
      base_url: {
        default: requested.origin,
        description: "Your deployment's api base URL, e.g. https://api.svc-credit.example (default: the host that served this document)",
      },
    },
  };
  // The host this copy was fetched from first: a client (the /docs page's "Try it out" on the api host, whose CSP
  // allows only its own origin) calls /v1/embed/* where it read the document. The widget pages stay on the widget host.
  const both = requested.origin === widgetOrigin ? [widgetServer, apiHost] : [apiHost, widgetServer];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    if (!path.startsWith("/v1/embed/")) continue;
    for (const op of Object.values(item)) if (op && typeof op === "object" && "responses" in op) (op as { servers?: unknown }).servers = both;
  }
  return doc;
}
