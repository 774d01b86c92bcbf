import { and, eq, sql } from "drizzle-orm";
import { sandboxLedgers } from "../../db/schema/settlement-tracking.ts";
import { tenants } from "../../db/schema/tenants.ts";
import { conflict } from "../domain/errors.ts";
import { DAY_MS } from "../domain/pricing.ts";
import type { Chain } from "../domain/rails.ts";
import { consoleLogger, safeErrorFields } from "../observability/logger.ts";
import { pollChain } from "../settlement/listener.ts";
import { sweepDueLoans, type SweepReport } from "../sweeps/run-sweeps.ts";
import { loadTenant, tenantClock } from "../tenants/tenant-context.ts";
import type { VerbDeps } from "../verbs.ts";

/** One call moves the clock at most this far: past any tenure (15 days) plus any grace (30 days), many times over. */
export const MAX_ADVANCE_SECONDS = (400 * DAY_MS) / 1000;

/** The sandbox clock never passes the end of 9999 (JavaScript dates end in 275760; ISO-8601 years have four digits). */
export const LATEST_SANDBOX_TIME_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

export type SandboxClock = { now: Date; offsetMs: number };

/**
 * The tenant's sandbox clock: the system clock plus the tenant's sandbox
 * offset. Only sandbox keys reach it (`requireMode`); a certified tenant keeps
 * its sandbox clock, which only its sandbox loans run on.
 */
export async function readSandboxClock({ db, clock: systemClock }: Pick<VerbDeps, "db" | "clock">, input: { tenantId: string }): Promise<SandboxClock> {
  const tenant = await loadTenant(db, input.tenantId);
  return { now: tenantClock(systemClock, tenant, "sandbox").now(), offsetMs: tenant.clockOffsetMs };
}

/**
 * Moves the tenant's sandbox clock `seconds` forward, then runs the
 * overdue/default sweep for that tenant before returning, so `loan.overdue`
 * and `loan.defaulted` are already in the outbox when the caller looks
 * (DECISIONS.md "Sandbox helpers"). The offset is added in SQL, so two
 * concurrent advances add up instead of one overwriting the other; the clock
 * only moves forward. Live loans never see it: they run on the system clock
 * (`tenantClock(…, "live")`), so a certified tenant's sandbox key may still
 * move its sandbox through time.
 *
 * @example await advanceSandboxClock({ db, writer, clock }, { tenantId, seconds: 8 * 86_400 })
 * // { now: <8 days ahead>, offsetMs: 691_200_000, swept: { visited: 1, failed: 0 } }
 */
export async function advanceSandboxClock(
  deps: Pick<VerbDeps, "db" | "writer" | "clock" | "chain">,
  input: { tenantId: string; seconds: number },
): Promise<SandboxClock & { swept: SweepReport & { unreadLedgers?: Chain[] } }> {
  const { db, writer, clock: systemClock } = deps;
  const latestOffset = LATEST_SANDBOX_TIME_MS - systemClock.now().getTime();
  const [moved] = await db
    .update(tenants)
    .set({ clockOffsetMs: sql`${tenants.clockOffsetMs} + ${input.seconds * 1000}` as unknown as number })
    // Never past the last time a date can be written (~250,000 advances got there, and the clock routes answered 500).
    .where(and(eq(tenants.id, input.tenantId), sql`${tenants.clockOffsetMs} + ${input.seconds * 1000} <= ${latestOffset}`))
    .returning({ clockOffsetMs: tenants.clockOffsetMs });
  if (!moved) {
    await loadTenant(db, input.tenantId);
    throw conflict("The sandbox clock cannot move past 9999-12-31T23:59:59.999Z; sign up another tenant for a fresh sandbox");
  }
  // Payments already on the tenant's ledgers are credited before the sweep judges its loans on the new time: a
  // repayment made on time, written but not yet polled (a transfer racing this call), had its loan swept into
  // DEFAULTED first, with loan.overdue and loan.defaulted sent, and then REPAID with no late fee.
  // A ledger that cannot be read now does not fail the call (the clock has moved: a retry would move it twice); the
  // sweep runs as DECISIONS.md says, and the answer names the ledgers not read (the cron's poll reads them later).
  const ledgers = await db.select({ chain: sandboxLedgers.chain }).from(sandboxLedgers).where(eq(sandboxLedgers.tenantId, input.tenantId));
  const unreadLedgers: Chain[] = [];
  for (const { chain } of ledgers) {
    try {
      await pollChain(deps, { chain, sandboxTenantId: input.tenantId });
    } catch (err) {
      consoleLogger.error("sandbox ledger poll before the clock's sweep failed", { chain, tenantId: input.tenantId, ...safeErrorFields(err) });
      unreadLedgers.push(chain);
    }
  }
  const swept = {
    ...(await sweepDueLoans({ db, writer, clock: systemClock }, { tenantId: input.tenantId })),
    ...(unreadLedgers.length ? { unreadLedgers } : {}),
  };
  const offsetMs = moved.clockOffsetMs;
  return { now: tenantClock(systemClock, { clockOffsetMs: offsetMs }, "sandbox").now(), offsetMs, swept };
}
