import { and, desc, eq, isNull, type SQL } from "drizzle-orm";
import { batchColumn, type BatchResults } from "../../db/batch-columns.ts";
import type { Db } from "../../db/create-db.ts";
import { loanProducts } from "../../db/schema/loan-products.ts";
import { merchantConfigs } from "../../db/schema/merchant-configs.ts";
import { widgetPrograms } from "../../db/schema/widget-programs.ts";

/**
 * What `GET /v1/me` shows of a tenant, as two selects for one `db.batch()`
 * (the caller reads of authentication): its configurations with their
 * active loan product, and its live widget programs. `tenantId` may be SQL
 * (the tenant of the credential, evaluated in the batch). The joined
 * columns carry names of their own: a D1 batch keys rows by column name
 * (db/batch-columns.ts).
 */
export const tenantDescriptionReads = (db: Db, tenantId: string | SQL) =>
  [
    db
      .select({ config: merchantConfigs, loanProductId: batchColumn(loanProducts.id, "described_loan_product_id") })
      .from(merchantConfigs)
      .innerJoin(loanProducts, eq(loanProducts.merchantConfigId, merchantConfigs.id))
      .where(eq(merchantConfigs.tenantId, tenantId))
      .orderBy(desc(merchantConfigs.createdAt), desc(merchantConfigs.id)),
    db
      .select({
        program: widgetPrograms,
        network: batchColumn(merchantConfigs.network, "described_network"),
        stablecoin: batchColumn(merchantConfigs.stablecoin, "described_stablecoin"),
        loanProductId: batchColumn(loanProducts.id, "described_loan_product_id"),
      })
      .from(widgetPrograms)
      .innerJoin(merchantConfigs, eq(merchantConfigs.id, widgetPrograms.merchantConfigId))
      .innerJoin(loanProducts, eq(loanProducts.merchantConfigId, merchantConfigs.id))
      .where(and(eq(widgetPrograms.tenantId, tenantId), isNull(widgetPrograms.deletedAt)))
      .orderBy(desc(widgetPrograms.createdAt), desc(widgetPrograms.id)),
  ] as const;

type DescriptionRows = BatchResults<ReturnType<typeof tenantDescriptionReads>>;

/** The tenant's description from the rows of `tenantDescriptionReads`. */
export function describeTenant([configs, programs]: DescriptionRows) {
  return {
    merchantConfigs: configs.map((r) => ({ ...r.config, loanProductId: r.loanProductId })),
    widgetPrograms: programs,
  };
}
