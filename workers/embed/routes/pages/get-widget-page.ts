import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { chainConfig } from "../../../../shared/chains/chain-config.ts";
import { widgetConfigView } from "../../../../shared/embed/config-view.ts";
import { CHANNELS } from "../../../../shared/embed/draw.ts";
import { programContext } from "../../../../shared/embed/program-context.ts";
import type { WidgetBoot } from "../../client/boot.ts";
import { WIDGET_APP_ENTRY } from "../../client-assets.generated.ts";
import type { EmbedAppEnv } from "../../env.ts";
import { documentPage } from "./document-page.ts";
import { KeyParams } from "../params.ts";
import { newNonce, pageSecurityHeaders } from "../../pages/content-security.ts";
import { WidgetPage } from "../../pages/widget-page.tsx";
import { ASSET_PREFIX } from "./get-widget-asset.ts";
import { parentOriginFor } from "./parent-origin.ts";

/** Where the page may connect besides itself: TON Connect's bridges and wallet list, WalletConnect's relay. */
const WALLETCONNECT_SRC = ["wss://relay.walletconnect.com", "wss://relay.walletconnect.org", "https://*.walletconnect.com", "https://*.walletconnect.org"];
const TONCONNECT_SRC = ["https:"];

/**
 * `{embed_url}/embed/<embedKey>?channel=…&parent=<origin>`: the widget's
 * iframe (unknown key: 404). Framed only by the program's origins; the
 * parent origin is kept only when it is one of them (the app posts nothing
 * otherwise); an unknown channel is WEB.
 */
export const register = (app: OpenAPIHono<EmbedAppEnv>) => {
  documentPage(app, {
    path: "/embed/{embedKey}",
    operationId: "embed.widgetPage",
    summary: "The widget's iframe page",
    description:
      "The borrower's flow (connect, eligibility, KYC, agreement, drawdown, confirmation, repayment), mounted by widget.js. Framed only by the program's allowed origins (CSP frame-ancestors); scripts only with the response's nonce. `parent` is kept only when it is one of the program's origins (the widget posts svc:* messages to it); an unknown `channel` is WEB.",
    contentType: "text/html",
    params: KeyParams,
    query: z.object({ channel: z.enum(CHANNELS).optional(), parent: z.string().optional().openapi({ description: "The embedding page's origin" }) }),
    notFound: "Unknown or deleted embed key",
  });
  return app.get("/embed/:embedKey", async (c) => {
    const deps = c.get("deps");
    const program = await programContext(deps.db, c.req.param("embedKey"));
    const key = program.program.embedKey;
    const asked = c.req.query("channel") ?? "";
    const channel = (CHANNELS as readonly string[]).includes(asked) ? (asked as WidgetBoot["channel"]) : "WEB";
    const family = chainConfig(program.chain).family;
    const origin = new URL(c.req.url).origin;
    const boot: WidgetBoot = {
      embedKey: key,
      channel,
      parentOrigin: parentOriginFor(program, c.req.query("parent"), c.req.header("referer")),
      apiBase: `/v1/embed/${encodeURIComponent(key)}`,
      repayPath: `/embed/${encodeURIComponent(key)}/repay/`,
      config: widgetConfigView(program),
      family,
      evmChainId: family === "EVM" ? (chainConfig(program.chain).chainId ?? null) : null,
      walletConnectProjectId: family === "EVM" ? deps.walletConnectProjectId : null,
      tonManifestUrl: `${origin}/embed/${encodeURIComponent(key)}/tonconnect-manifest.json`,
    };
    const nonce = newNonce();
    const connectSrc = family === "TON" ? TONCONNECT_SRC : boot.walletConnectProjectId ? WALLETCONNECT_SRC : [];
    const page = WidgetPage({ nonce, boot, entryUrl: `${ASSET_PREFIX}${WIDGET_APP_ENTRY}` });
    return c.html(page, 200, { ...pageSecurityHeaders({ nonce, frameAncestors: program.program.allowedOrigins, connectSrc }), "cache-control": "no-store" });
  });
};
