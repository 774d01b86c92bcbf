import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { formatAmount } from "../../../../shared/domain/money.ts";
import type { EmbedAppEnv } from "../../env.ts";
import { EMBED_ERRORS, KeyParams } from "../params.ts";

const fee = (type: "FIXED" | "PERCENTAGE", value: bigint) => ({ type, value: formatAmount(value) });

export const route = createRoute({
  method: "get",
  path: "/v1/embed/{embedKey}/config",
  summary: "Widget configuration",
  description: `Branding, "Powered by" line, rail, tenures and amount limits of the embed key's program. ${EMBED_ERRORS}`,
  request: { params: KeyParams },
  responses: { 200: { description: "The program's configuration", content: { "application/json": { schema: z.object({ program: z.object({ id: z.string(), name: z.string() }) }).passthrough() } } } },
});

export const register = (app: OpenAPIHono<EmbedAppEnv>) =>
  app.openapi(route, (c) => {
    const { program, product, settings, chain } = c.get("program");
    return c.json(
      {
        program: { id: program.id, name: program.name },
        branding: settings.branding,
        poweredBy: "Powered by svc credit",
        network: product.network,
        stablecoin: product.stablecoin,
        chain,
        tenures: product.tenures,
        minAmount: formatAmount(product.minTicket),
        maxAmount: formatAmount(product.maxTicket),
        processingFee: fee(product.processingFeeType, product.processingFeeValue),
        lateFee: fee(product.lateFeeType, product.lateFeeValue),
        gracePeriodDays: product.gracePeriodDays,
      },
      200,
    );
  });
