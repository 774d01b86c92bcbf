import type { OpenAPIHono } from "@hono/zod-openapi";
import { merchantName } from "../../../../shared/domain/plain-text.ts";
import { programContext } from "../../../../shared/embed/program-context.ts";
import type { EmbedAppEnv } from "../../env.ts";
import { documentPage } from "./document-page.ts";
import { KeyParams } from "../params.ts";

/**
 * `{embed_url}/embed/<embedKey>/tonconnect-manifest.json`: the TON Connect
 * manifest of the widget (the iframe is the TON Connect app): its URL is the
 * widget's origin, so wallets sign for the widget's domain, which accept
 * checks. Public and readable from any origin (wallets fetch it), as the
 * TON Connect specification requires.
 */
export const register = (app: OpenAPIHono<EmbedAppEnv>) => {
  documentPage(app, {
    path: "/embed/{embedKey}/tonconnect-manifest.json",
    operationId: "embed.tonConnectManifest",
    summary: "TON Connect manifest",
    description: "The widget's TON Connect manifest: url (the widget's origin, the domain wallets sign for), name, iconUrl. Readable from any origin.",
    contentType: "application/json",
    params: KeyParams,
    notFound: "Unknown or deleted embed key",
  });
  return app.get("/embed/:embedKey/tonconnect-manifest.json", async (c) => {
    const program = await programContext(c.get("deps").db, c.req.param("embedKey"));
    const origin = new URL(c.req.url).origin;
    const b = program.settings.branding;
    return c.json(
      {
        url: origin,
        // The name a TON wallet shows when asked to connect: on one line, as in the messages it signs.
        name: merchantName(b.companyName, program.tenant.name),
        iconUrl: b.logoUrl ?? `${origin}/embed-assets/icon.png`,
        ...(b.termsUrl ? { termsOfUseUrl: b.termsUrl } : {}),
      },
      200,
      { "access-control-allow-origin": "*", "cache-control": "public, max-age=300" },
    );
  });
};
