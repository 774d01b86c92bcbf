import { and, eq, getTableColumns } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { newestFirst, pageOf } from "../../db/pagination.ts";
import { loanProducts } from "../../db/schema/loan-products.ts";
import { merchantConfigs } from "../../db/schema/merchant-configs.ts";
import { notFound } from "../domain/errors.ts";
import type { SavedMerchantConfig } from "./save-merchant-config.ts";
import type { VerbDeps } from "../verbs.ts";

/**
 * A configuration with its active loan product's id. Every save writes the
 * product in the same batch as the configuration, so the inner join never
 * hides a configuration.
 */
const withProduct = (db: Db) =>
  db
    .select({ ...getTableColumns(merchantConfigs), loanProductId: loanProducts.id })
    .from(merchantConfigs)
    .innerJoin(loanProducts, eq(loanProducts.merchantConfigId, merchantConfigs.id));

/** The tenant's configurations, newest first (keyset pagination). */
export async function listMerchantConfigs(
  { db }: Pick<VerbDeps, "db">,
  input: { tenantId: string; limit: number; cursor?: string },
): Promise<{ data: SavedMerchantConfig[]; nextCursor: string | null }> {
  const page = newestFirst(merchantConfigs, input.cursor);
  const rows = await withProduct(db)
    .where(and(eq(merchantConfigs.tenantId, input.tenantId), page.where))
    .orderBy(...page.orderBy)
    .limit(input.limit + 1);
  return pageOf(rows, input.limit);
}

/** One configuration of the tenant; another tenant's id is not found. */
export async function getMerchantConfig({ db }: Pick<VerbDeps, "db">, input: { tenantId: string; id: string }): Promise<SavedMerchantConfig> {
  const [row] = await withProduct(db)
    .where(and(eq(merchantConfigs.id, input.id), eq(merchantConfigs.tenantId, input.tenantId)))
    .limit(1);
  if (!row) throw notFound("Merchant configuration");
  return row;
}
