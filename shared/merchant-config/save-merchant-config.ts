import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { loanProducts } from "../../db/schema/loan-products.ts";
import { merchantConfigs } from "../../db/schema/merchant-configs.ts";
import { notFound, validationError } from "../domain/errors.ts";
import { newId } from "../domain/ids.ts";
import { checkMerchantConfigTerms, type MerchantConfigTerms } from "../domain/merchant-config.ts";
import { productRow, termsColumns } from "./merchant-config-rows.ts";
import type { VerbDeps } from "../verbs.ts";

export type SavedMerchantConfig = typeof merchantConfigs.$inferSelect & { loanProductId: string };

/**
 * The statements that create a configuration and its active loan product;
 * callers add them to their own batch (signup creates a tenant with one).
 */
export function createMerchantConfigStatements(db: Db, tenantId: string, terms: MerchantConfigTerms, now: Date) {
  const errors = checkMerchantConfigTerms(terms);
  if (errors.length > 0) throw validationError(errors);
  const config = { id: newId(), tenantId, ...termsColumns(terms), createdAt: now, updatedAt: now };
  const loanProductId = newId();
  return {
    row: { ...config, loanProductId } as SavedMerchantConfig,
    statements: [db.insert(merchantConfigs).values(config), db.insert(loanProducts).values(productRow(config, loanProductId, terms, now))] as const,
  };
}

/** Creates a configuration and its active loan product, atomically. */
export async function createMerchantConfig({ db }: Pick<VerbDeps, "db">, input: { tenantId: string; terms: MerchantConfigTerms; now: Date }) {
  const { row, statements } = createMerchantConfigStatements(db, input.tenantId, input.terms, input.now);
  await db.batch(statements);
  return row;
}

/**
 * Replaces a configuration's terms and synchronizes its active loan product
 * in the same batch (SPEC.md: every save creates or synchronizes the product;
 * a product missing for any reason is created again).
 */
export async function updateMerchantConfig(
  { db }: Pick<VerbDeps, "db">,
  input: { tenantId: string; id: string; terms: MerchantConfigTerms; now: Date },
): Promise<SavedMerchantConfig> {
  const errors = checkMerchantConfigTerms(input.terms);
  if (errors.length > 0) throw validationError(errors);
  const [existing] = await db
    .select({ id: merchantConfigs.id, productId: loanProducts.id })
    .from(merchantConfigs)
    .leftJoin(loanProducts, eq(loanProducts.merchantConfigId, merchantConfigs.id))
    .where(and(eq(merchantConfigs.id, input.id), eq(merchantConfigs.tenantId, input.tenantId)))
    .limit(1);
  if (!existing) throw notFound("Merchant configuration");
  const columns = termsColumns(input.terms);
  const config = { id: input.id, tenantId: input.tenantId };
  const productId = existing.productId ?? newId();
  const [updated] = await db.batch([
    db
      .update(merchantConfigs)
      .set({ ...columns, updatedAt: input.now })
      .where(and(eq(merchantConfigs.id, input.id), eq(merchantConfigs.tenantId, input.tenantId)))
      .returning(),
    existing.productId
      ? db
          .update(loanProducts)
          .set({ ...columns, status: "ACTIVE", updatedAt: input.now })
          .where(eq(loanProducts.id, existing.productId))
      : db.insert(loanProducts).values(productRow(config, productId, input.terms, input.now)),
  ]);
  const row = updated[0];
  if (!row) throw notFound("Merchant configuration");
  return { ...row, loanProductId: productId };
}
