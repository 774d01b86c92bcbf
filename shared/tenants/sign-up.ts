import { sql } from "drizzle-orm";
import { isForeignKeyViolation, isUniqueViolation } from "../../db/errors.ts";
import { insertIf } from "../../db/guarded-writes.ts";
import { liquidityPools } from "../../db/schema/liquidity-pools.ts";
import { tenantSettings } from "../../db/schema/tenant-settings.ts";
import { tenants } from "../../db/schema/tenants.ts";
import { users } from "../../db/schema/users.ts";
import { ADDRESS_HELD_MESSAGE, heldAddress } from "../auth/email-release.ts";
import { hashPassword } from "../auth/passwords.ts";
import { conflict } from "../domain/errors.ts";
import { EMAIL_TAKEN_MESSAGE } from "../users/add-user.ts";
import { newId } from "../domain/ids.ts";
import { DEFAULT_MERCHANT_CONFIG } from "../domain/merchant-config.ts";
import { UNITS_PER_COIN } from "../domain/money.ts";
import { createMerchantConfigStatements } from "../merchant-config/save-merchant-config.ts";
import { defaultPolicyInsert } from "../underwriting/policies.ts";
import { createWidgetProgramStatement } from "../widget-programs/widget-program-rows.ts";
import type { VerbDeps } from "../verbs.ts";

/** A new sandbox tenant's pools: 100,000.00 test USDC and 100,000.00 test USDT (for a TON rail), `liquidity.low` under 1,000.00. */
export const SANDBOX_POOL_UNITS = 100_000n * UNITS_PER_COIN;
export const SANDBOX_POOL_LOW_THRESHOLD_UNITS = 1_000n * UNITS_PER_COIN;

export type SignUpInput = {
  email: string;
  password: string;
  companyName: string;
  /** The token of a followed release link for `email`: only it signs up with an address held after a release. */
  releaseToken?: string;
  now: Date;
};

/**
 * Creates a sandbox tenant that can lend at once (DECISIONS.md "Dashboard
 * identity"): the owner, settings with the company name, a POLYGON/USDC
 * merchant configuration with its active loan product, a widget program with
 * its embed key, the default underwriting policy (version 1), and funded
 * sandbox pools (USDC, and USDT for a TON rail), all in one batch. An
 * address held after a release (`heldAddress`) signs up only with its release
 * token: the tenant's insert is guarded by it, so without the token the
 * owner's insert fails its tenant reference and the batch writes nothing.
 */
export async function signUp({ db }: Pick<VerbDeps, "db">, input: SignUpInput) {
  const email = input.email.trim().toLowerCase();
  const password = await hashPassword(input.password);
  const tenant = { id: newId(), name: input.companyName.trim(), mode: "sandbox" as const, clockOffsetMs: 0, createdAt: input.now };
  const user = {
    id: newId(),
    tenantId: tenant.id,
    email,
    role: "OWNER" as const,
    passwordHash: password.hash,
    passwordSalt: password.salt,
    passwordIterations: password.iterations,
    createdAt: input.now,
    sessionVersion: 0,
  };
  const config = createMerchantConfigStatements(db, tenant.id, DEFAULT_MERCHANT_CONFIG, input.now);
  const program = createWidgetProgramStatement(db, {
    tenantId: tenant.id,
    mode: tenant.mode,
    merchantConfigId: config.row.id,
    name: "Default program",
    allowedOrigins: [],
    now: input.now,
  });
  const held = await heldAddress(email, input.now, input.releaseToken);
  try {
    await db.batch([
      insertIf(db, tenants, tenant, sql`NOT ${held}`),
      db.insert(users).values(user),
      db.insert(tenantSettings).values({ tenantId: tenant.id, companyName: tenant.name, updatedAt: input.now }),
      ...config.statements,
      program.statement,
      defaultPolicyInsert(db, tenant.id, input.now),
      db.insert(liquidityPools).values(
        (["USDC", "USDT"] as const).map((stablecoin) => ({
          id: newId(),
          tenantId: tenant.id,
          mode: "sandbox" as const,
          stablecoin,
          available: SANDBOX_POOL_UNITS,
          reserved: 0n,
          lowThreshold: SANDBOX_POOL_LOW_THRESHOLD_UNITS,
          createdAt: input.now,
          updatedAt: input.now,
        })),
      ),
    ]);
  } catch (err) {
    if (isUniqueViolation(err, "users.email")) throw conflict(EMAIL_TAKEN_MESSAGE);
    if (isForeignKeyViolation(err)) {
      const [still] = await db.select({ held: sql<number>`${held}` }).from(sql`(SELECT 1)`);
      if (still?.held) throw conflict(ADDRESS_HELD_MESSAGE);
    }
    throw err;
  }
  return { tenant, user };
}
