import { eq } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { tenantSettings } from "../../db/schema/tenant-settings.ts";
import { tenants } from "../../db/schema/tenants.ts";
import { offsetClock, type Clock } from "../domain/clock.ts";
import { notFound } from "../domain/errors.ts";
import type { TenantMode } from "../domain/rails.ts";

/**
 * How far a mode's clock runs ahead of the system clock: the tenant's sandbox
 * offset (moved by `POST /v1/sandbox/clock/advance`) for sandbox, nothing for
 * live. A certified tenant keeps its advanced sandbox clock for its sandbox
 * loans while its live loans run on real time.
 */
export const clockOffsetFor = (tenant: { clockOffsetMs: number }, mode: TenantMode): number => (mode === "sandbox" ? tenant.clockOffsetMs : 0);

/** The clock a tenant's `mode` runs on: the system clock plus that mode's offset. */
export const tenantClock = (system: Clock, tenant: { clockOffsetMs: number }, mode: TenantMode): Clock => offsetClock(system, clockOffsetFor(tenant, mode));

/** A tenant with the settings loans depend on. */
export async function loadTenant(db: Db, tenantId: string) {
  const [row] = await db
    .select({ tenant: tenants, requiresKycBeforeFunding: tenantSettings.requiresKycBeforeFunding })
    .from(tenants)
    .leftJoin(tenantSettings, eq(tenantSettings.tenantId, tenants.id))
    .where(eq(tenants.id, tenantId))
    .limit(1);
  if (!row) throw notFound("Tenant");
  return { ...row.tenant, requiresKycBeforeFunding: row.requiresKycBeforeFunding ?? false };
}

export type LoadedTenant = Awaited<ReturnType<typeof loadTenant>>;

/** Now on each mode's clock of the tenant: the sandbox's (moved by the sandbox clock) and the live one's (the system's). */
export const nowByMode = (system: Clock, tenant: { clockOffsetMs: number }): Record<TenantMode, Date> => ({
  sandbox: tenantClock(system, tenant, "sandbox").now(),
  live: tenantClock(system, tenant, "live").now(),
});
