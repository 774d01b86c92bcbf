import { and, asc, desc, eq, isNotNull, isNull, min } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { apiKeys } from "../../db/schema/api-keys.ts";
import { commercialTerms, KYB_INSERTION_ORDER, kybSubmissions } from "../../db/schema/go-live.ts";
import { loanProducts } from "../../db/schema/loan-products.ts";
import { loans } from "../../db/schema/loans.ts";
import { policies } from "../../db/schema/policies.ts";
import { tenantSettings } from "../../db/schema/tenant-settings.ts";
import { users } from "../../db/schema/users.ts";
import { webhookEndpoints } from "../../db/schema/webhooks.ts";
import type { GoLiveFacts } from "../domain/go-live.ts";

/**
 * Step 5's fact: a verified live DISBURSEMENT wallet, its on-chain balance and
 * the minimum ticket it must cover (the smallest of the active products on its
 * chain): shared/go-live/live-liquidity.ts reads it from the wallets and the
 * chain port. Without a reader the step stays PENDING.
 */
export type LiveLiquidityReader = (input: { tenantId: string }) => Promise<GoLiveFacts["liquidity"]>;

export type GoLiveFactsDeps = { db: Db; liveLiquidity?: LiveLiquidityReader };

/** No live wallets exist yet: no tenant has live liquidity. */
const noLiveWallets: LiveLiquidityReader = async () => null;

/** Everything the 10 rules read about a tenant, loaded once (independent reads, in parallel). */
export async function loadGoLiveFacts(deps: GoLiveFactsDeps, input: { tenantId: string }): Promise<GoLiveFacts> {
  const { db } = deps;
  const { tenantId } = input;
  const [kyb, terms, policy, product, webhook, key, owner, settings, cycle] = await Promise.all([
    db.select().from(kybSubmissions).where(eq(kybSubmissions.tenantId, tenantId)).orderBy(desc(kybSubmissions.submittedAt), desc(KYB_INSERTION_ORDER)).limit(1),
    db
      .select({ at: min(commercialTerms.recordedAt) })
      .from(commercialTerms)
      .where(eq(commercialTerms.tenantId, tenantId)),
    db.select({ at: policies.createdAt }).from(policies).where(eq(policies.tenantId, tenantId)).orderBy(desc(policies.version)).limit(1),
    // The active product with the smallest minimum ticket: the one step 5's balance must cover at the least.
    db
      .select({ at: loanProducts.updatedAt, minPrincipal: loanProducts.minTicket })
      .from(loanProducts)
      .where(and(eq(loanProducts.tenantId, tenantId), eq(loanProducts.status, "ACTIVE")))
      .orderBy(asc(loanProducts.minTicket))
      .limit(1),
    db
      .select({ at: min(webhookEndpoints.createdAt) })
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.tenantId, tenantId), isNull(webhookEndpoints.deletedAt))),
    db
      .select({ at: min(apiKeys.createdAt) })
      .from(apiKeys)
      .where(and(eq(apiKeys.tenantId, tenantId), isNull(apiKeys.revokedAt))),
    db
      .select({ at: min(users.createdAt) })
      .from(users)
      .where(and(eq(users.tenantId, tenantId), eq(users.role, "OWNER"))),
    db.select({ companyName: tenantSettings.companyName, at: tenantSettings.updatedAt }).from(tenantSettings).where(eq(tenantSettings.tenantId, tenantId)),
    // A sandbox loan funded and then repaid.
    db
      .select({ at: min(loans.repaidAt) })
      .from(loans)
      .where(and(eq(loans.tenantId, tenantId), eq(loans.mode, "sandbox"), eq(loans.status, "REPAID"), isNotNull(loans.fundedAt), isNotNull(loans.repaidAt))),
  ]);
  const k = kyb[0];
  const p = product[0];
  const branding = settings[0];
  return {
    kyb: k ? { status: k.status, submittedAt: k.submittedAt, decidedAt: k.decidedAt } : null,
    commercialTermsAt: terms[0]?.at ?? null,
    policyActiveAt: policy[0]?.at ?? null,
    product: p ? { activeSince: p.at, minPrincipal: p.minPrincipal } : null,
    liquidity: p ? await (deps.liveLiquidity ?? noLiveWallets)({ tenantId }) : null,
    webhookAt: webhook[0]?.at ?? null,
    apiKeyAt: key[0]?.at ?? null,
    ownerAt: owner[0]?.at ?? null,
    brandingAt: branding?.companyName?.trim() ? branding.at : null,
    sandboxCycleAt: cycle[0]?.at ?? null,
  };
}
