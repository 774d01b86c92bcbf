import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { SETTLEMENT_KINDS, SETTLEMENT_STATUSES } from "../../../../db/schema/loan-vocabularies.ts";
import { displayAmount } from "../../../../shared/domain/money.ts";
import { CHAINS, STABLECOINS, TENANT_MODES } from "../../../../shared/domain/rails.ts";
import { modeScope } from "../../../../shared/auth/principal.ts";
import { listSettlements, type SettlementRow } from "../../../../shared/settlements/list-settlements.ts";
import { iso, PageQuerySchema, TimestampSchema } from "../../../../shared/schemas/common.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

const ParamSchema = z.object({
  loanId: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "loanId", in: "path" }, example: "5b0e1c0a-6f7d-4c1e-9a3b-2f1d0c9e8a7b" }),
});

const SettlementSchema = z
  .object({
    id: z.uuid(),
    kind: z.enum(SETTLEMENT_KINDS).openapi({
      description:
        "FUNDING: principal to the borrower; REPAYMENT (settled the loan) / PARTIAL_REPAYMENT: from the borrower; SURPLUS: received beyond the total due, refundable; REFUND: back to the borrower.",
    }),
    status: z.enum(SETTLEMENT_STATUSES).openapi({
      description:
        "CONFIRMED on chain, FAILED (a failed transfer is kept too), or REVERSED (a live chain reorganized the block it was in away; it no longer counts).",
    }),
    amount: z.string().openapi({ example: "100.00", description: "Decimal string in stablecoin units, 2 decimals." }),
    chain: z.enum(CHAINS),
    mode: z.enum(TENANT_MODES).openapi({ description: 'The loan\'s mode (DECISIONS.md "Modes").' }),
    asset: z.enum(STABLECOINS),
    txHash: z.string().nullable(),
    blockNumber: z.number().int().nullable().openapi({ description: "The block of the transaction (null for funding recorded before block tracking)." }),
    from: z.string().nullable().openapi({ description: "Sending address (the pool for funding, the borrower's wallet for repayments)." }),
    to: z.string().nullable(),
    paidAt: TimestampSchema.openapi({
      description:
        "When the transfer was made, on the loan's clock: a repayment's block time (the tenant's sandbox time on a sandbox chain), at which it was judged; for funding, when it was sent.",
    }),
    createdAt: TimestampSchema.openapi({ description: "When the service recorded it." }),
  })
  .openapi("Settlement");

const ResponseSchema = z.object({ loanId: z.uuid(), data: z.array(SettlementSchema), nextCursor: z.string().nullable() }).openapi("SettlementHistory");

/** Movements are whole cents; anything finer (a TON transfer with 6 decimals) is shown exactly rather than refused. */

const settlementView = (s: SettlementRow) => ({
  id: s.id,
  kind: s.kind,
  status: s.status,
  amount: displayAmount(s.amount),
  chain: s.chain,
  mode: s.mode,
  asset: s.asset,
  txHash: s.txHash,
  blockNumber: s.blockNumber,
  from: s.fromAddress,
  to: s.toAddress,
  paidAt: iso(s.paidAt),
  createdAt: iso(s.createdAt),
});

export const route = defineRoute(
  { auth: "KEY_OR_JWT" },
  {
    method: "get",
    path: "/v1/settlements/{loanId}",
    operationId: "settlements.get",
    tags: ["Loans"],
    summary: "Settlement history of a loan",
    description: [
      "Every money movement of the loan, newest first as every list (DECISIONS.md \"Lists\": `limit` 1..100, default 20, and `cursor`): the funding transfer of the principal to the borrower's wallet (with the loan's `fundingTxHash`), and repayments as the settlement listener records them (an overpayment's SURPLUS row comes just before the REPAYMENT written with it). Failed transfers are listed too, with status FAILED. Amounts are decimal strings with 2 decimals, or 6 when a payment is not a whole number of cents.",
      "A loan without any movement yet (declined, waiting for review or liquidity) answers an empty `data`. Another tenant's loan, a loan of the other mode than the key's (DECISIONS.md \"Modes\"), or an unknown id: 404. A dashboard session sees loans of both modes.",
    ].join("\n\n"),
    request: { params: ParamSchema, query: PageQuerySchema },
    responses: { 200: { description: "The loan's settlements", content: { "application/json": { schema: ResponseSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const principal = c.get("principal");
    const { limit, cursor } = c.req.valid("query");
    const history = await listSettlements(c.get("deps"), {
      tenantId: principal.tenant.id,
      loanId: c.req.valid("param").loanId,
      mode: modeScope(principal),
      limit,
      cursor,
    });
    return c.json({ loanId: history.loanId, data: history.data.map(settlementView), nextCursor: history.nextCursor }, 200);
  });
