import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { LOAN_LIST_STATUSES, listLoans } from "../../../../shared/loans/list-loans.ts";
import { loanView } from "../../../../shared/loans/loan-view.ts";
import { modeScope } from "../../../../shared/auth/principal.ts";
import { ModeQuerySchema, pageOf, PageQuerySchema } from "../../../../shared/schemas/common.ts";
import { LoanSchema } from "../../../../shared/schemas/loan.ts";
import { ChainSchema } from "../../../../shared/schemas/merchant-config.ts";
import { canonicalWalletAnyChain } from "../../../../shared/schemas/policy.ts";
import { DECISION_OUTCOMES } from "../../../../shared/domain/vocabularies.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

const QuerySchema = PageQuerySchema.extend({
  mode: ModeQuerySchema,
  status: z
    .enum(LOAN_LIST_STATUSES)
    .optional()
    .openapi({ param: { name: "status", in: "query" }, description: "CREATED excludes declined loans; DECLINED is the derived state" }),
  borrowerRef: z
    .string()
    .trim()
    .min(1)
    .max(255)
    .optional()
    .openapi({ param: { name: "borrowerRef", in: "query" } }),
  decision: z
    .enum(DECISION_OUTCOMES)
    .optional()
    .openapi({
      param: { name: "decision", in: "query" },
      description: "The underwriting outcome now: MANUAL_REVIEW lists the loans waiting for a reviewer (a reviewed loan is APPROVED or DECLINED)",
    }),
  borrowerWalletAddress: z
    .string()
    .trim()
    .min(1)
    .max(128)
    .optional()
    .openapi({
      param: { name: "borrowerWalletAddress", in: "query" },
      description: "The borrower's wallet in any form the API accepts at creation (EVM in any case, TON friendly or raw): compared in its canonical form",
    }),
  chain: ChainSchema.optional().openapi({ param: { name: "chain", in: "query" } }),
  createdFrom: z.iso
    .datetime({ offset: true })
    .optional()
    .openapi({ param: { name: "createdFrom", in: "query" }, description: "Inclusive, ISO-8601" }),
  createdTo: z.iso
    .datetime({ offset: true })
    .optional()
    .openapi({ param: { name: "createdTo", in: "query" }, description: "Inclusive, ISO-8601" }),
});

export const route = defineRoute(
  { auth: "KEY_OR_JWT" },
  {
    method: "get",
    path: "/v1/loans",
    operationId: "loans.list",
    tags: ["Loans"],
    summary: "List loans",
    description:
      "The tenant's loans of the key's mode (a sandbox key sees sandbox loans only, a live key live ones; `mode` naming the other: 403; a dashboard session sees both, or one with `mode`), newest first, filtered by `status` (CREATED, ACTIVE, REPAID, DEFAULTED, or the derived DECLINED; CREATED leaves declined loans out), `decision` (the underwriting outcome; MANUAL_REVIEW: the review queue), `borrowerRef`, `borrowerWalletAddress`, `chain`, `createdFrom`/`createdTo` (inclusive), with `limit` and `cursor`.",
    request: { query: QuerySchema },
    responses: { 200: { description: "A page of loans", content: { "application/json": { schema: pageOf(LoanSchema) } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, clock } = c.get("deps");
    const principal = c.get("principal");
    const { tenant } = principal;
    const { limit, cursor, createdFrom, createdTo, mode, borrowerWalletAddress, ...rest } = c.req.valid("query");
    const page = await listLoans(
      { db },
      {
        tenantId: tenant.id,
        limit,
        cursor,
        filters: {
          ...rest,
          // Loans store the canonical address; an unparseable one is kept as given and simply matches nothing.
          borrowerWalletAddress: borrowerWalletAddress ? (canonicalWalletAnyChain(borrowerWalletAddress) ?? borrowerWalletAddress) : undefined,
          mode: modeScope(principal, mode) ?? undefined,
          createdFrom: createdFrom ? new Date(createdFrom) : undefined,
          createdTo: createdTo ? new Date(createdTo) : undefined,
        },
      },
    );
    // Each loan on its own mode's clock: a dashboard lists sandbox and live loans together.
    return c.json({ data: page.data.map((l) => loanView(l, tenantClock(clock, tenant, l.mode).now())), nextCursor: page.nextCursor }, 200);
  });
