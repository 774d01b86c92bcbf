import { and, eq, getTableColumns, isNull } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { newestFirst, pageOf } from "../../db/pagination.ts";
import { loanProducts } from "../../db/schema/loan-products.ts";
import { merchantConfigs } from "../../db/schema/merchant-configs.ts";
import { widgetPrograms } from "../../db/schema/widget-programs.ts";
import { forbidden, notFound, validationError } from "../domain/errors.ts";
import { checkAllowedOrigins } from "../domain/origins.ts";
import type { Network, Stablecoin, TenantMode } from "../domain/rails.ts";
import { loadTenant } from "../tenants/tenant-context.ts";
import { createWidgetProgramStatement } from "./widget-program-rows.ts";
import type { VerbDeps } from "../verbs.ts";

/** A program with the rail and loan product it lends with, read through its configuration. */
export type WidgetProgramWithRail = typeof widgetPrograms.$inferSelect & {
  network: Network;
  stablecoin: Stablecoin;
  loanProductId: string;
};

type ProgramTerms = { name: string; merchantConfigId: string; allowedOrigins: string[] };

/** Live programs joined to their configuration and its active product. */
const withRail = (db: Db) =>
  db
    .select({
      ...getTableColumns(widgetPrograms),
      network: merchantConfigs.network,
      stablecoin: merchantConfigs.stablecoin,
      loanProductId: loanProducts.id,
    })
    .from(widgetPrograms)
    .innerJoin(merchantConfigs, eq(merchantConfigs.id, widgetPrograms.merchantConfigId))
    .innerJoin(loanProducts, eq(loanProducts.merchantConfigId, merchantConfigs.id));

/**
 * The tenant's configuration a program is to run on, with its rail and
 * product. Configurations are never deleted, so checking here and writing
 * afterwards cannot race with a removal.
 */
async function railOf(db: Db, tenantId: string, merchantConfigId: string) {
  const [config] = await db
    .select({ network: merchantConfigs.network, stablecoin: merchantConfigs.stablecoin, loanProductId: loanProducts.id })
    .from(merchantConfigs)
    .innerJoin(loanProducts, eq(loanProducts.merchantConfigId, merchantConfigs.id))
    .where(and(eq(merchantConfigs.id, merchantConfigId), eq(merchantConfigs.tenantId, tenantId)))
    .limit(1);
  if (!config) throw notFound("Merchant configuration");
  return config;
}

function checkOrigins(origins: string[]) {
  const errors = checkAllowedOrigins(origins);
  if (errors.length > 0) throw validationError(errors);
}

/**
 * Creates a program with its own freshly generated embed key on one of the
 * tenant's configurations (another tenant's configuration: not found).
 */
export async function createWidgetProgram(
  { db }: Pick<VerbDeps, "db">,
  input: ProgramTerms & { tenantId: string; mode: TenantMode; now: Date },
): Promise<WidgetProgramWithRail> {
  checkOrigins(input.allowedOrigins);
  const rail = await railOf(db, input.tenantId, input.merchantConfigId);
  // Certification is never withdrawn, so reading it before the insert cannot let a live program through early.
  if (input.mode === "live" && !(await loadTenant(db, input.tenantId)).certifiedAt) {
    throw forbidden(
      'Live widget programs are made after go-live certification (GET /v1/go-live), and this tenant is not certified; make a sandbox program (mode: "sandbox")',
    );
  }
  const { row, statement } = createWidgetProgramStatement(db, input);
  await statement;
  return { ...row, ...rail };
}

/** The tenant's live programs, newest first (keyset pagination); deleted ones are left out. */
export async function listWidgetPrograms({ db }: Pick<VerbDeps, "db">, input: { tenantId: string; limit: number; cursor?: string }) {
  const page = newestFirst(widgetPrograms, input.cursor);
  const rows: WidgetProgramWithRail[] = await withRail(db)
    .where(and(eq(widgetPrograms.tenantId, input.tenantId), isNull(widgetPrograms.deletedAt), page.where))
    .orderBy(...page.orderBy)
    .limit(input.limit + 1);
  return pageOf(rows, input.limit);
}

/** One live program of the tenant; deleted or another tenant's: not found. */
export async function getWidgetProgram({ db }: Pick<VerbDeps, "db">, input: { tenantId: string; id: string }): Promise<WidgetProgramWithRail> {
  const [row] = await withRail(db)
    .where(and(eq(widgetPrograms.id, input.id), eq(widgetPrograms.tenantId, input.tenantId), isNull(widgetPrograms.deletedAt)))
    .limit(1);
  if (!row) throw notFound("Widget program");
  return row;
}

/**
 * Replaces a program's name, configuration and allowed origins; its embed key
 * never changes. The update is conditional on the program still being live,
 * so a concurrent delete wins and this answers not found.
 */
export async function updateWidgetProgram(
  { db }: Pick<VerbDeps, "db">,
  input: ProgramTerms & { tenantId: string; id: string; now: Date },
): Promise<WidgetProgramWithRail> {
  checkOrigins(input.allowedOrigins);
  // The path's program is reported missing before the body's configuration.
  await getWidgetProgram({ db }, input);
  const rail = await railOf(db, input.tenantId, input.merchantConfigId);
  const [row] = await db
    .update(widgetPrograms)
    .set({ name: input.name, merchantConfigId: input.merchantConfigId, allowedOrigins: input.allowedOrigins, updatedAt: input.now })
    .where(and(eq(widgetPrograms.id, input.id), eq(widgetPrograms.tenantId, input.tenantId), isNull(widgetPrograms.deletedAt)))
    .returning();
  if (!row) throw notFound("Widget program");
  return { ...row, ...rail };
}

/**
 * Soft-deletes a program: the row stays (loans reference it) but its embed
 * key answers 404 and it leaves every list. Deleting a deleted program: not found.
 */
export async function deleteWidgetProgram({ db }: Pick<VerbDeps, "db">, input: { tenantId: string; id: string; now: Date }): Promise<void> {
  const [row] = await db
    .update(widgetPrograms)
    .set({ deletedAt: input.now, updatedAt: input.now })
    .where(and(eq(widgetPrograms.id, input.id), eq(widgetPrograms.tenantId, input.tenantId), isNull(widgetPrograms.deletedAt)))
    .returning({ id: widgetPrograms.id });
  if (!row) throw notFound("Widget program");
}
