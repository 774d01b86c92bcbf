import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { createDb } from "../../../../db/create-db.ts";
import { programByEmbedKey } from "../../../../shared/embed/program-by-key.ts";
import { systemClock } from "../../../../shared/domain/clock.ts";
import { loadLoan } from "../../../../shared/loans/load-loan.ts";
import { repaymentFor } from "../../../../shared/settlement/repayment-for-loan.ts";
import { loadTenant, tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import type { EmbedAppEnv } from "../../env.ts";

export const route = createRoute({
  method: "get",
  path: "/v1/embed/{embedKey}/loans/{loanId}/repayment-instructions",
  summary: "Repayment instructions for a loan of the embed key's tenant",
  description:
    "The same instructions as POST /v1/loans/:id/repay (EVM approve + repay, TON transfer with comment, Solana transfer with memo) for any loan of the embed key's tenant, for the amount due now. Unknown key or loan: 404; a loan not ACTIVE or DEFAULTED: 409.",
  request: {
    params: z.object({
      embedKey: z.string().min(1).max(64).openapi({ param: { name: "embedKey", in: "path" } }),
      loanId: z.string().min(1).max(64).openapi({ param: { name: "loanId", in: "path" } }),
    }),
  },
  responses: { 200: { description: "Instructions for the loan's chain", content: { "application/json": { schema: z.object({ chain: z.string(), supported: z.literal(true) }).passthrough() } } } },
});

export const register = (app: OpenAPIHono<EmbedAppEnv>) =>
  app.openapi(route, async (c) => {
    const db = createDb(c.env.DB);
    const { embedKey, loanId } = c.req.valid("param");
    const program = await programByEmbedKey(db, embedKey);
    const tenant = await loadTenant(db, program.tenantId);
    const loan = await loadLoan(db, tenant.id, loanId);
    return c.json(repaymentFor(loan, tenantClock(systemClock, tenant).now()) as never, 200);
  });
