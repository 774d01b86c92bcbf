import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { loanProducts } from "../../db/schema/loan-products.ts";
import { embedKeyMode } from "../auth/api-keys.ts";
import { notFound } from "../domain/errors.ts";
import { chainForRail } from "../domain/rails.ts";
import { getTenantSettings } from "../settings/tenant-settings-verbs.ts";
import { loadTenant } from "../tenants/tenant-context.ts";
import { programByEmbedKey } from "./program-by-key.ts";

/**
 * Everything an embed call works with: the program of the key, its tenant
 * and settings, and the active loan product of the program's configuration
 * (so a rail change of the configuration changes the widget at once).
 */
export async function programContext(db: Db, embedKey: string) {
  const program = await programByEmbedKey(db, embedKey);
  const [tenant, product] = await Promise.all([
    loadTenant(db, program.tenantId),
    db
      .select()
      .from(loanProducts)
      .where(and(eq(loanProducts.merchantConfigId, program.merchantConfigId), eq(loanProducts.status, "ACTIVE")))
      .limit(1)
      .then((rows) => rows[0]),
  ]);
  if (!product) throw notFound("Loan product of this program");
  const settings = await getTenantSettings({ db }, { tenantId: tenant.id, tenantName: tenant.name });
  // The program's own mode (its embed key's), not the tenant's: a certified tenant keeps its sandbox programs.
  const mode = embedKeyMode(program.embedKey);
  return { program, tenant, product, settings, mode, chain: chainForRail(product.network, mode) };
}

export type ProgramContext = Awaited<ReturnType<typeof programContext>>;
