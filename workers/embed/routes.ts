import type { OpenAPIHono } from "@hono/zod-openapi";
import type { EmbedAppEnv } from "./env.ts";
import * as getHealth from "./routes/health/get-health.ts";
import * as getRepaymentInstructions from "./routes/loans/get-repayment-instructions.ts";

/**
 * Every route of the embed worker, registered in this order. Embed calls live
 * under `/v1/embed/:embedKey/…` (reached on `{base_url}` through the
 * `/v1/embed/*` route), the widget's pages at the root of `{embed_url}`.
 */
export const ROUTES: ((app: OpenAPIHono<EmbedAppEnv>) => unknown)[] = [getHealth.register, getRepaymentInstructions.register];
