import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { modeScope } from "../../../../shared/auth/principal.ts";
import { ModeQuerySchema, pageOf, PageQuerySchema } from "../../../../shared/schemas/common.ts";
import { listUnmatched } from "../../../../shared/settlement/unmatched-verbs.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { UnmatchedSchema, unmatchedView } from "./unmatched-schemas.ts";

const QuerySchema = PageQuerySchema.extend({
  mode: ModeQuerySchema,
  open: z
    .enum(["true", "false"])
    .optional()
    .openapi({ param: { name: "open", in: "query" }, description: "true: only payments not attributed yet" }),
});

export const route = defineRoute(
  { auth: "KEY_OR_JWT" },
  {
    method: "get",
    path: "/v1/settlements/unmatched",
    operationId: "settlements.unmatched.list",
    tags: ["Repayment"],
    summary: "Unmatched payments",
    description:
      "Payments the settlement listener received but could not apply, kept and never dropped: a payment to a loan already REPAID, a TON transfer with a missing or wrong comment, an unknown loan id. Listed for the tenant they can be traced to (the loan, or in the sandbox the tenant whose call made the transfer). Newest first. A payment's mode is its chain's: an API key sees only its own mode's (`mode` naming the other: 403), a dashboard session both unless `mode` names one.",
    request: { query: QuerySchema },
    responses: { 200: { description: "A page of unmatched payments", content: { "application/json": { schema: pageOf(UnmatchedSchema) } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { limit, cursor, open, mode } = c.req.valid("query");
    const principal = c.get("principal");
    const page = await listUnmatched(c.get("deps"), {
      tenantId: principal.tenant.id,
      mode: modeScope(principal, mode) ?? undefined,
      open: open === "true",
      limit,
      cursor,
    });
    const { liveChains } = c.get("deps");
    return c.json({ data: page.data.map((u) => unmatchedView(u, liveChains)), nextCursor: page.nextCursor }, 200);
  });
