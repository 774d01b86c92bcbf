import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { modeScope } from "../../../../shared/auth/principal.ts";
import { displayAmount } from "../../../../shared/domain/money.ts";
import { STABLECOINS, TENANT_MODES } from "../../../../shared/domain/rails.ts";
import { ModeQuerySchema, TimestampSchema } from "../../../../shared/schemas/common.ts";
import { todayStats } from "../../../../shared/stats/today-stats.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

const count = (description: string) => z.number().int().min(0).openapi({ description });
const units = (description: string) =>
  z.string().openapi({ example: "1250.00", description: `${description} Decimal string: 2 decimals, or 6 when it is not a whole number of cents.` });

const TodayStatsSchema = z
  .object({
    mode: z.enum(TENANT_MODES),
    from: TimestampSchema.openapi({
      description: "Start of the day (UTC midnight on the mode's clock: a sandbox clock moved ahead moves the day), inclusive.",
    }),
    to: TimestampSchema.openapi({ description: "End of the day, exclusive." }),
    created: count("Loans created today (declined ones included)."),
    funded: count("Loans funded today."),
    repaid: count("Loans repaid in full today."),
    overdue: count("Loans that became overdue today (`loan.overdue`)."),
    defaulted: count(
      "Loans whose default was recorded today (`loan.defaulted`), even when the terms put it earlier (`defaultedAt` is `dueAt` + the grace period; a sweep after midnight, or a sandbox clock moved on past the grace period, records it later).",
    ),
    declined: count("Loans declined today: by underwriting at creation, or by a reviewer's REJECT (on the day of the review)."),
    awaitingReview: count("MANUAL_REVIEW loans waiting for a decision, whatever the day they came in (the review queue)."),
    amounts: z
      .array(
        z.object({
          stablecoin: z.enum(STABLECOINS),
          lent: units("Principal of the loans funded today."),
          outstanding: units(
            "What ACTIVE loans owe now: principal, processing fee and the late fees the daily sweep has recorded, less what was paid. Can trail a loan's own `amountDue` by the day's late fee the sweep has not recorded yet.",
          ),
        }),
      )
      .openapi({ description: "Per stablecoin with loans in this mode (USDC and USDT are not added up); empty without loans." }),
  })
  .openapi("TodayStats");

export const route = defineRoute(
  { auth: "KEY_OR_JWT" },
  {
    method: "get",
    path: "/v1/stats/today",
    operationId: "stats.today",
    tags: ["Loans"],
    summary: "The day's numbers",
    description: [
      "The dashboard Home's numbers for one mode: loans created, funded, repaid, overdue, defaulted and declined today, the principal lent today and the amount outstanding now per stablecoin, and how many MANUAL_REVIEW loans wait for a decision. Read-only, one aggregate over the tenant's loans.",
      '`mode` (DECISIONS.md "Modes"): an API key reads its own mode (naming the other: 403); a dashboard session reads the mode it names, by default the tenant\'s (`sandbox` until certified, then `live`). "Today" is the UTC day on that mode\'s clock.',
    ].join("\n\n"),
    request: { query: z.object({ mode: ModeQuerySchema }) },
    responses: { 200: { description: "The day's numbers", content: { "application/json": { schema: TodayStatsSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const principal = c.get("principal");
    const { tenant } = principal;
    const mode = modeScope(principal, c.req.valid("query").mode) ?? tenant.mode;
    const stats = await todayStats(c.get("deps"), { tenantId: tenant.id, mode, now: tenantClock(c.get("deps").clock, tenant, mode).now() });
    return c.json(
      {
        mode,
        from: stats.from.toISOString(),
        to: stats.to.toISOString(),
        created: stats.created,
        funded: stats.funded,
        repaid: stats.repaid,
        overdue: stats.overdue,
        defaulted: stats.defaulted,
        declined: stats.declined,
        awaitingReview: stats.awaitingReview,
        amounts: stats.amounts.map((a) => ({ stablecoin: a.stablecoin, lent: displayAmount(a.lent), outstanding: displayAmount(a.outstanding) })),
      },
      200,
    );
  });
