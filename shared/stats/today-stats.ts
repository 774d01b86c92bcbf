import { type AnyColumn, and, eq, sql } from "drizzle-orm";
import { loans } from "../../db/schema/loans.ts";
import type { Stablecoin, TenantMode } from "../domain/rails.ts";
import type { VerbDeps } from "../verbs.ts";

export type TodayStats = {
  /** The UTC day on the mode's clock: [from, to). */
  from: Date;
  to: Date;
  created: number;
  funded: number;
  repaid: number;
  overdue: number;
  defaulted: number;
  declined: number;
  /** MANUAL_REVIEW loans not yet approved or rejected, whatever their day. */
  awaitingReview: number;
  /** Per stablecoin (USDC and USDT are separate currencies): base units lent today and outstanding now. */
  amounts: { stablecoin: Stablecoin; lent: bigint; outstanding: bigint }[];
};

const DAY_MS = 86_400_000;

/** The UTC day containing `now`. */
export function utcDay(now: Date): { from: Date; to: Date } {
  const from = new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS);
  return { from, to: new Date(from.getTime() + DAY_MS) };
}

/**
 * The Home page's numbers for one mode of one tenant, in one aggregate query
 * over its loans (grouped by stablecoin, so the read is one pass through
 * (tenant_id, mode, …) whatever the number of loans): what happened today
 * (created, funded, repaid, overdue, defaulted, declined, and the principal
 * lent) and what stands now (loans awaiting review, the amount outstanding).
 *
 * `outstanding` is what ACTIVE loans still owe: principal, processing fee and
 * the late fees the daily sweep has recorded, less what was paid, never below
 * zero per loan. It can trail a loan's own `amountDue` by the late fee of the
 * day the sweep has not recorded yet.
 */
export async function todayStats({ db }: Pick<VerbDeps, "db">, input: { tenantId: string; mode: TenantMode; now: Date }): Promise<TodayStats> {
  const { from, to } = utcDay(input.now);
  const [f, t] = [from.getTime(), to.getTime()];
  const within = (column: AnyColumn) => sql`(${column} >= ${f} AND ${column} < ${t})`;
  const count = (condition: ReturnType<typeof sql>) => sql<number>`COALESCE(SUM(CASE WHEN ${condition} THEN 1 ELSE 0 END), 0)`;
  const rows = await db
    .select({
      stablecoin: loans.stablecoin,
      created: count(within(loans.createdAt)),
      funded: count(within(loans.fundedAt)),
      repaid: count(within(loans.repaidAt)),
      overdue: count(within(loans.overdueAt)),
      defaulted: count(within(loans.defaultedAt)),
      declined: count(sql`${within(loans.decidedAt)} AND ${loans.decisionOutcome} = 'DECLINED'`),
      awaitingReview: count(sql`(${loans.status} = 'CREATED' AND ${loans.decisionOutcome} = 'MANUAL_REVIEW')`),
      lent: sql<number>`COALESCE(SUM(CASE WHEN ${within(loans.fundedAt)} THEN ${loans.principal} ELSE 0 END), 0)`,
      outstanding: sql<number>`COALESCE(SUM(CASE WHEN ${loans.status} = 'ACTIVE' THEN MAX(0, ${loans.principal} + ${loans.processingFee} + ${loans.dailyLateFee} * ${loans.lateFeeDays} - ${loans.paid}) ELSE 0 END), 0)`,
    })
    .from(loans)
    .where(and(eq(loans.tenantId, input.tenantId), eq(loans.mode, input.mode)))
    .groupBy(loans.stablecoin);
  const total = (key: "created" | "funded" | "repaid" | "overdue" | "defaulted" | "declined" | "awaitingReview") =>
    rows.reduce((sum, r) => sum + Number(r[key]), 0);
  return {
    from,
    to,
    created: total("created"),
    funded: total("funded"),
    repaid: total("repaid"),
    overdue: total("overdue"),
    defaulted: total("defaulted"),
    declined: total("declined"),
    awaitingReview: total("awaitingReview"),
    amounts: rows
      .map((r) => ({ stablecoin: r.stablecoin, lent: BigInt(r.lent), outstanding: BigInt(r.outstanding) }))
      .sort((a, b) => a.stablecoin.localeCompare(b.stablecoin)),
  };
}
