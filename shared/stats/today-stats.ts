import { type AnyColumn, and, eq, gte, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { equalsTerm } from "../../db/index-terms.ts";
import { loans } from "../../db/schema/loans.ts";
import { STABLECOINS, type Stablecoin, type TenantMode } from "../domain/rails.ts";
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
 * The Home page's numbers for one mode of one tenant, in one round trip
 * whose reads follow today's activity and the open loans, never the
 * tenant's history (a dashboard loads them on every visit of its Home):
 * what happened today (created, funded, repaid, overdue, defaulted,
 * declined, and the principal lent) and what stands now (loans awaiting
 * review, the amount outstanding).
 *
 * Every change of a loan sets its `updatedAt` to the change's time (on the
 * mode's clock, commit-transition.ts), and sets no timestamp later than
 * that; the clocks only move forward (a sandbox clock is advanced, never set
 * back). So a loan with any of today's timestamps was updated today: today's figures read, per stablecoin, the
 * loans updated since midnight through (tenant_id, mode, stablecoin,
 * updated_at) (migration 0027), which also says whether the mode has loans
 * of that stablecoin at all, and `outstanding` the ACTIVE loans ((tenant_id,
 * mode, status)); `awaitingReview` reads the loans in review
 * ((tenant_id, status, decision_outcome), `+mode`). Plans tested
 * (shared/loans/history-plans.test.ts).
 *
 * `outstanding` is what ACTIVE loans still owe: principal, processing fee and
 * the late fees the daily sweep has recorded, less what was paid, never below
 * zero per loan. It can trail a loan's own `amountDue` by the late fee of the
 * day the sweep has not recorded yet.
 */
export function todayStatsQueries(db: Db, input: { tenantId: string; mode: TenantMode; now: Date }) {
  const { from, to } = utcDay(input.now);
  const [f, t] = [from.getTime(), to.getTime()];
  const within = (column: AnyColumn | SQL) => sql`(${column} >= ${f} AND ${column} < ${t})`;
  const count = (condition: ReturnType<typeof sql>) => sql<number>`COALESCE(SUM(CASE WHEN ${condition} THEN 1 ELSE 0 END), 0)`;
  const ofMode = and(eq(loans.tenantId, input.tenantId), eq(loans.mode, input.mode));
  const today = (stablecoin: Stablecoin) =>
    db
      .select({
        created: count(within(loans.createdAt)),
        funded: count(within(loans.fundedAt)),
        repaid: count(within(loans.repaidAt)),
        overdue: count(within(loans.overdueAt)),
        // By when the default was recorded (and loan.defaulted fired), as overdue is; defaults from before migration 0039 by their terms' time.
        defaulted: count(within(sql`COALESCE(${loans.defaultRecordedAt}, ${loans.defaultedAt})`)),
        // Declined when the decision was made: a reviewer's REJECT on its review's day, a policy's decline at creation.
        declined: count(sql`${within(sql`COALESCE(${loans.reviewedAt}, ${loans.decidedAt})`)} AND ${loans.decisionOutcome} = 'DECLINED'`),
        lent: sql<number>`COALESCE(SUM(CASE WHEN ${within(loans.fundedAt)} THEN ${loans.principal} ELSE 0 END), 0)`,
        // Whether the mode has loans of this stablecoin at all: one entry of the same index.
        any: sql<number>`EXISTS (SELECT 1 FROM ${loans} WHERE ${and(ofMode, eq(loans.stablecoin, stablecoin))})`,
        // What its ACTIVE loans owe, through (tenant_id, mode, status): the stablecoin compared beside (`+`).
        outstanding: sql<number>`(SELECT COALESCE(SUM(MAX(0, ${loans.principal} + ${loans.processingFee} + ${loans.dailyLateFee} * ${loans.lateFeeDays} - ${loans.paid})), 0) FROM ${loans} WHERE ${and(ofMode, eq(loans.status, "ACTIVE"))} AND ${equalsTerm(loans.stablecoin, stablecoin, true)})`,
      })
      .from(loans)
      .where(and(ofMode, eq(loans.stablecoin, stablecoin), gte(loans.updatedAt, from)));
  // One read per stablecoin of the vocabulary (not added up); a new stablecoin fails to compile here.
  const [usdt, usdc]: readonly ["USDT", "USDC"] = STABLECOINS;
  return [
    today(usdt),
    today(usdc),
    db
      .select({ n: sql<number>`COUNT(*)` })
      .from(loans)
      .where(
        and(
          eq(loans.tenantId, input.tenantId),
          equalsTerm(loans.mode, input.mode, true),
          eq(loans.status, "CREATED"),
          eq(loans.decisionOutcome, "MANUAL_REVIEW"),
        ),
      ),
  ] as const;
}

export async function todayStats({ db }: Pick<VerbDeps, "db">, input: { tenantId: string; mode: TenantMode; now: Date }): Promise<TodayStats> {
  const { from, to } = utcDay(input.now);
  const [usdt, usdc, review] = await db.batch(todayStatsQueries(db, input));
  const perCoin = [
    { stablecoin: "USDT" as const, ...usdt[0]! },
    { stablecoin: "USDC" as const, ...usdc[0]! },
  ];
  const total = (key: "created" | "funded" | "repaid" | "overdue" | "defaulted" | "declined") => perCoin.reduce((sum, r) => sum + Number(r[key]), 0);
  return {
    from,
    to,
    created: total("created"),
    funded: total("funded"),
    repaid: total("repaid"),
    overdue: total("overdue"),
    defaulted: total("defaulted"),
    declined: total("declined"),
    awaitingReview: Number(review[0]?.n ?? 0),
    amounts: perCoin
      .filter((r) => Number(r.any) === 1)
      .map((r) => ({ stablecoin: r.stablecoin, lent: BigInt(r.lent), outstanding: BigInt(r.outstanding) }))
      .sort((a, b) => a.stablecoin.localeCompare(b.stablecoin)),
  };
}
