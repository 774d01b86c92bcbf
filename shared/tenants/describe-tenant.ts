import { and, desc, eq, isNull } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { loanProducts } from "../../db/schema/loan-products.ts";
import { merchantConfigs } from "../../db/schema/merchant-configs.ts";
import { widgetPrograms } from "../../db/schema/widget-programs.ts";

/**
 * What `GET /v1/me` shows of a tenant: its configurations with their active
 * loan product and its live widget programs. Two reads issued together, not
 * in one `db.batch()`: drizzle's D1 batch maps rows by column name, and these
 * joins repeat names (`id`), which D1 then mixes up (caught by the workerd tier).
 */
export async function describeTenant(db: Db, tenantId: string) {
  const [configs, programs] = await Promise.all([
    db
      .select({ config: merchantConfigs, loanProductId: loanProducts.id })
      .from(merchantConfigs)
      .innerJoin(loanProducts, eq(loanProducts.merchantConfigId, merchantConfigs.id))
      .where(eq(merchantConfigs.tenantId, tenantId))
      .orderBy(desc(merchantConfigs.createdAt), desc(merchantConfigs.id)),
    db
      .select({ program: widgetPrograms, network: merchantConfigs.network, stablecoin: merchantConfigs.stablecoin, loanProductId: loanProducts.id })
      .from(widgetPrograms)
      .innerJoin(merchantConfigs, eq(merchantConfigs.id, widgetPrograms.merchantConfigId))
      .innerJoin(loanProducts, eq(loanProducts.merchantConfigId, merchantConfigs.id))
      .where(and(eq(widgetPrograms.tenantId, tenantId), isNull(widgetPrograms.deletedAt)))
      .orderBy(desc(widgetPrograms.createdAt), desc(widgetPrograms.id)),
  ]);
  return {
    merchantConfigs: configs.map((r) => ({ ...r.config, loanProductId: r.loanProductId })),
    widgetPrograms: programs,
  };
}
