import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { listHeldPayments } from "../../../../shared/settlement/held-payments.ts";
import { iso } from "../../../../shared/schemas/common.ts";
import { displayAmount } from "../../../../shared/domain/money.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

const LIMIT = 500;

const HeldPaymentSchema = z
  .object({
    chain: z.string(),
    txHash: z.string(),
    logIndex: z.number().int(),
    kind: z.enum(["payment", "failed"]).openapi({ description: "`payment`: a repayment to credit; `failed`: a borrower's reverted repay to record" }),
    tenantId: z.string().nullable().openapi({ description: "The tenant whose COLLECTIONS wallet it paid, on TON; null on POLYGON and BASE" }),
    loanId: z.string().nullable(),
    to: z.string().openapi({ description: "The COLLECTIONS wallet it paid" }),
    amount: z.string().openapi({ example: "103.00" }),
    blockNumber: z.number().int(),
    attempts: z.number().int(),
    lastError: z.string(),
    nextAttemptAt: z.string().datetime(),
    createdAt: z.string().datetime(),
  })
  .openapi("OperatorHeldPayment");

export const route = defineRoute(
  { auth: "OPERATOR" },
  {
    method: "get",
    path: "/v1/operator/held-payments",
    operationId: "operator.heldPayments.list",
    tags: ["Platform operator"],
    summary: "List live payments the settlement listeners could not apply yet",
    description:
      "A live payment whose loan's writer failed is held and tried again at later polls (1 min, 2 min, 4 min… at most an hour apart, never given up), while the listener's cursor moves on for every other payment. This lists them, oldest first (at most 500), with the reason of the last attempt and when the next one runs. An empty list is the normal state; a row that keeps failing needs a look.",
    responses: {
      200: { description: "The held payments", content: { "application/json": { schema: z.object({ data: z.array(HeldPaymentSchema) }) } } },
    },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db } = c.get("deps");
    const rows = await listHeldPayments(db, LIMIT);
    return c.json(
      {
        data: rows.map((row) => ({
          chain: row.chain,
          txHash: row.txHash,
          logIndex: row.logIndex,
          kind: row.kind,
          tenantId: row.tenantId,
          loanId: row.loanId,
          to: row.to,
          amount: displayAmount(row.amount),
          blockNumber: row.blockNumber,
          attempts: row.attempts,
          lastError: row.lastError,
          nextAttemptAt: iso(row.nextAttemptAt),
          createdAt: iso(row.createdAt),
        })),
      },
      200,
    );
  });
