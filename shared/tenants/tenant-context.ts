import { eq } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { tenantSettings } from "../../db/schema/tenant-settings.ts";
import { tenants } from "../../db/schema/tenants.ts";
import { offsetClock, type Clock } from "../domain/clock.ts";
import { notFound } from "../domain/errors.ts";

/** The tenant's clock: the system clock plus its sandbox offset. */
export const tenantClock = (system: Clock, tenant: { clockOffsetMs: number }): Clock => offsetClock(system, tenant.clockOffsetMs);

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
