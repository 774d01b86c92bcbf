import type { OpenAPIHono } from "@hono/zod-openapi";
import type { EmbedAppEnv } from "./env.ts";
import * as acceptDraw from "./routes/draws/accept-draw.ts";
import * as getDraw from "./routes/draws/get-draw.ts";
import * as quoteDraw from "./routes/draws/quote-draw.ts";
import * as getHealth from "./routes/health/get-health.ts";
import * as getRepayPage from "./routes/pages/get-repay-page.ts";
import * as getTonConnectManifest from "./routes/pages/get-tonconnect-manifest.ts";
import * as getWidgetAsset from "./routes/pages/get-widget-asset.ts";
import * as getWidgetPage from "./routes/pages/get-widget-page.ts";
import * as getWidgetScript from "./routes/pages/get-widget-script.ts";
import * as getRepaymentInstructions from "./routes/loans/get-repayment-instructions.ts";
import * as bootstrapCreditLine from "./routes/program/bootstrap-credit-line.ts";
import * as checkEligibility from "./routes/program/check-eligibility.ts";
import * as getConfig from "./routes/program/get-config.ts";
import * as createWalletSessionChallenge from "./routes/wallet-session/create-challenge.ts";
import * as openWalletSession from "./routes/wallet-session/open-session.ts";

/**
 * Every route of the embed worker. Embed calls live under
 * `/v1/embed/:embedKey/…` (reached on `{base_url}` through the `/v1/embed/*`
 * route), the widget's pages at the root of `{embed_url}`.
 */
export const ROUTES: ((app: OpenAPIHono<EmbedAppEnv>) => unknown)[] = [
  getHealth.register,
  getWidgetScript.register,
  getWidgetPage.register,
  getWidgetAsset.register,
  getTonConnectManifest.register,
  getRepayPage.register,
  getConfig.register,
  createWalletSessionChallenge.register,
  openWalletSession.register,
  checkEligibility.register,
  bootstrapCreditLine.register,
  quoteDraw.register,
  acceptDraw.register,
  getRepaymentInstructions.register,
  getDraw.register,
];
