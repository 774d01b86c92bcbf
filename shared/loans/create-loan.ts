import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { insertIf } from "../../db/guarded-writes.ts";
import { borrowers } from "../../db/schema/borrowers.ts";
import type { CHANNELS } from "../../db/schema/loan-vocabularies.ts";
import { loanProducts } from "../../db/schema/loan-products.ts";
import { loans, type LoanRow } from "../../db/schema/loans.ts";
import { agreementInsertIf, type AgreementRecord } from "../agreements/agreement-record.ts";
import { canonicalAddress } from "../domain/addresses.ts";
import { DomainError, forbidden, notFound, validationError } from "../domain/errors.ts";
import { newId, isUuid } from "../domain/ids.ts";
import { parseAmount, formatAmount, TICKET_CAP_UNITS } from "../domain/money.ts";
import { dailyLateFeeUnits, processingFeeUnits } from "../domain/pricing.ts";
import { isSandboxChain, modeOfChain, RAILS, type Chain, type Network, type Stablecoin, type TenantMode } from "../domain/rails.ts";
import { eventInsertIf, loanEnvelope } from "../events/loan-events.ts";
import type { LoadedTenant } from "../tenants/tenant-context.ts";
import type { VerbDeps } from "../verbs.ts";
import { loanCarries, newWriteToken } from "./loan-guard.ts";
import { openPrincipalOfLine } from "./open-loans.ts";

export type CreateLoanInput = {
  loanProductId: string;
  borrowerRef: string;
  borrowerWalletAddress: string;
  chain: Chain;
  principalAmount: string;
  idempotencyKey: string;
  tenureDays?: number;
  /** Widget-originated loans (embed accept) carry their program and channel. */
  /**
   * A widget draw: the program and channel it came through, and the credit
   * line's limit, which the insert itself enforces (open principal of this
   * program and wallet plus this loan), so concurrent draws cannot overdraw.
   */
  program?: { id: string; channel: (typeof CHANNELS)[number]; creditLimit?: bigint };
  /**
   * The agreement the borrower signed before the loan exists (a widget
   * draw): inserted in the loan's own batch, only if the loan's row is, and
   * linked as its `agreementId`, so there is no loan without it.
   */
  agreement?: AgreementRecord;
  /**
   * The mode of the key that asks (DECISIONS.md "Modes"): an API key's, or
   * for a widget draw its program's embed key's. A sandbox key lends only on
   * sandbox chains, a live key only on live chains (403 otherwise).
   */
  keyMode?: TenantMode;
};

/**
 * The chains a product lends on in a mode: its rail's sandbox chain (plus
 * SOLANA_DEVNET for USDC, DECISIONS.md "Chains") in sandbox, its live chain
 * in live (a live key's, which exists once the tenant is certified).
 */
export function chainsFor(product: { network: Network; stablecoin: Stablecoin }, tenant: { mode: string }): Chain[] {
  const rail = RAILS[product.network];
  if (tenant.mode === "live") return [rail.liveChain];
  return product.stablecoin === "USDC" ? [rail.sandboxChain, "SOLANA_DEVNET"] : [rail.sandboxChain];
}

async function activeProduct(db: Db, tenantId: string, productId: string) {
  if (!isUuid(productId)) throw notFound("Loan product");
  const [product] = await db
    .select()
    .from(loanProducts)
    .where(and(eq(loanProducts.id, productId), eq(loanProducts.tenantId, tenantId), eq(loanProducts.status, "ACTIVE")))
    .limit(1);
  if (!product) throw notFound("Loan product");
  return product;
}

/**
 * Checks a loan request against its product and the tenant (SPEC.md "Chains",
 * "Limits"): chain of the rail (a live chain without certification: 403),
 * address valid for the chain, amount within the product's limits and the
 * cap, tenure among the product's. Returns the canonical values.
 */
function checkRequest(input: CreateLoanInput, product: Awaited<ReturnType<typeof activeProduct>>, tenant: LoadedTenant) {
  if (!isSandboxChain(input.chain) && !tenant.certifiedAt) {
    throw forbidden(`chain ${input.chain} is a live chain; live chains are enabled after go-live certification, and this tenant is not certified`);
  }
  if (input.keyMode === "sandbox" && !isSandboxChain(input.chain)) {
    throw forbidden(`chain ${input.chain} is a live chain and this is a sandbox API key (svc_test_…); live loans need a live key (svc_live_…)`);
  }
  if (input.keyMode === "live" && isSandboxChain(input.chain)) {
    throw forbidden(`chain ${input.chain} is a sandbox chain and this is a live API key (svc_live_…); sandbox loans need a sandbox key (svc_test_…)`);
  }
  const mode = input.keyMode ?? tenant.mode;
  const errors: string[] = [];
  const allowed = chainsFor(product, { mode });
  if (!allowed.includes(input.chain)) {
    errors.push(`chain: this product (${product.network}/${product.stablecoin}) lends on ${allowed.join(" or ")} in ${mode}`);
  }
  const address = canonicalAddress(input.chain, input.borrowerWalletAddress);
  if (!address.ok) errors.push(`borrowerWalletAddress: ${address.reason}`);
  const principal = parseAmount(input.principalAmount, 2);
  if (principal === null || principal <= 0n) {
    errors.push("principalAmount: must be a decimal string greater than 0 with at most 2 decimals");
  } else if (principal < product.minTicket || principal > product.maxTicket || principal > TICKET_CAP_UNITS) {
    errors.push(`principalAmount: must be between ${formatAmount(product.minTicket)} and ${formatAmount(product.maxTicket)}`);
  }
  const tenureDays = input.tenureDays ?? Math.min(...product.tenures);
  if (!product.tenures.includes(tenureDays)) {
    errors.push(`tenureDays: must be one of this product's tenures: ${product.tenures.join(", ")}`);
  }
  if (errors.length > 0) throw validationError(errors);
  return { walletAddress: (address as { address: string }).address, principal: principal!, tenureDays };
}

async function borrowerIdFor(db: Db, tenantId: string, borrowerRef: string, now: Date): Promise<string> {
  await db
    .insert(borrowers)
    .values({ id: newId(), tenantId, borrowerRef, kycStatus: "PENDING", createdAt: now, updatedAt: now })
    .onConflictDoNothing({ target: [borrowers.tenantId, borrowers.borrowerRef] });
  const [row] = await db
    .select({ id: borrowers.id })
    .from(borrowers)
    .where(and(eq(borrowers.tenantId, tenantId), eq(borrowers.borrowerRef, borrowerRef)))
    .limit(1);
  if (!row) throw new DomainError("INTERNAL", "borrower upsert lost");
  return row.id;
}

/**
 * The open principal of the row's program and wallet, plus the row's, is
 * within `limit` (evaluated by the insert itself). Amounts bind through the
 * principal column's encoder: D1 cannot bind a bigint.
 */
const withinCreditLimit = (row: LoanRow, limit: bigint) =>
  sql`${openPrincipalOfLine({ tenantId: row.tenantId, programId: row.programId!, walletAddress: row.borrowerWalletAddress })} + ${sql.param(row.principal, loans.principal)} <= ${sql.param(limit, loans.principal)}`;

/** The idempotency key space of POST /v1/loans with a sandbox key (a live key's: `api:live`). */
export const API_IDEMPOTENCY_SCOPE = "api";

/**
 * The key space a loan's idempotency key lives in: "api" for the merchant's
 * POST /v1/loans, `embed:<programId>:<wallet>` for a widget draw. Uniqueness
 * is per (tenant, scope, key), and the scope is a column of its own that the
 * API always sets to "api" ("api:live" for a live key), so no key either
 * side sends (however crafted) reaches a loan of the other side, of another
 * program or wallet, or of the other mode (a sandbox key never gets a live
 * loan back, DECISIONS.md "Modes").
 */
export const idempotencyScopeOf = (input: { program?: { id: string }; borrowerWalletAddress: string; keyMode?: TenantMode }) =>
  input.program
    ? `embed:${input.program.id}:${input.borrowerWalletAddress}`
    : input.keyMode === "live"
      ? `${API_IDEMPOTENCY_SCOPE}:live`
      : API_IDEMPOTENCY_SCOPE;

/** The loan a key made in one key space of the tenant, if any. */
export const findLoanByKey = async (db: Db, tenantId: string, scope: string, key: string): Promise<LoanRow | undefined> =>
  (
    await db
      .select()
      .from(loans)
      .where(and(eq(loans.tenantId, tenantId), eq(loans.idempotencyScope, scope), eq(loans.idempotencyKey, key)))
      .limit(1)
  )[0];

/**
 * Creates the loan in status CREATED with `loan.application_submitted`, or
 * finds the loan this idempotency key already created in its key space
 * (`idempotencyScopeOf`). The unique index on (tenant, scope, key) decides
 * races: the insert is `ON CONFLICT DO NOTHING` and its event is written only
 * if this insert's row exists, so 25 simultaneous requests make one loan and
 * one event. Underwriting and funding
 * follow in the loan's writer (`processLoan`).
 */
export async function createLoan(
  { db }: Pick<VerbDeps, "db">,
  input: CreateLoanInput & { tenant: LoadedTenant; now: Date },
): Promise<{ loan: LoanRow; created: boolean }> {
  const scope = idempotencyScopeOf(input);
  const existing = await findLoanByKey(db, input.tenant.id, scope, input.idempotencyKey);
  if (existing) return { loan: existing, created: false };

  const product = await activeProduct(db, input.tenant.id, input.loanProductId);
  const checked = checkRequest(input, product, input.tenant);
  const borrowerId = await borrowerIdFor(db, input.tenant.id, input.borrowerRef, input.now);
  const lateFee = { type: product.lateFeeType, value: product.lateFeeValue };
  const row: LoanRow = {
    id: newId(),
    tenantId: input.tenant.id,
    idempotencyKey: input.idempotencyKey,
    idempotencyScope: scope,
    loanProductId: product.id,
    borrowerId,
    borrowerRef: input.borrowerRef,
    borrowerWalletAddress: checked.walletAddress,
    chain: input.chain,
    mode: modeOfChain(input.chain),
    stablecoin: product.stablecoin,
    principal: checked.principal,
    processingFee: processingFeeUnits(checked.principal, { type: product.processingFeeType, value: product.processingFeeValue }),
    lateFeeType: lateFee.type,
    lateFeeValue: lateFee.value,
    dailyLateFee: dailyLateFeeUnits(checked.principal, lateFee),
    lateFeeDays: 0,
    paid: 0n,
    surplus: 0n,
    tenureDays: checked.tenureDays,
    gracePeriodDays: product.gracePeriodDays,
    status: "CREATED",
    decisionOutcome: null,
    decisionReasons: null,
    policyVersion: null,
    decidedAt: null,
    reviewedBy: null,
    reviewedAt: null,
    reviewNote: null,
    fundingState: "NONE",
    requiresKycGate: !input.program && input.tenant.requiresKycBeforeFunding,
    kycConfirmedAt: null,
    agreementId: input.agreement?.id ?? null,
    programId: input.program?.id ?? null,
    channel: input.program?.channel ?? null,
    poolId: null,
    fundingTxHash: null,
    dueAt: null,
    overdueAt: null,
    fundedAt: null,
    repaidAt: null,
    defaultedAt: null,
    writeToken: newWriteToken(),
    createdAt: input.now,
    updatedAt: input.now,
  };
  const insert =
    input.program?.creditLimit === undefined ? db.insert(loans).values(row) : insertIf(db, loans, row, withinCreditLimit(row, input.program.creditLimit));
  const [inserted] = await db.batch([
    insert.onConflictDoNothing({ target: [loans.tenantId, loans.idempotencyScope, loans.idempotencyKey] }).returning({ id: loans.id }),
    eventInsertIf(db, loanEnvelope("loan.application_submitted", row, input.now), row.id, loanCarries(row.id, row.writeToken)),
    ...(input.agreement ? [agreementInsertIf(db, input.agreement, row, loanCarries(row.id, row.writeToken))] : []),
  ]);
  if (inserted.length === 1) return { loan: row, created: true };
  const winner = await findLoanByKey(db, input.tenant.id, scope, input.idempotencyKey);
  if (!winner && input.program?.creditLimit !== undefined) {
    throw validationError(["amount: the credit line does not have this much available any more; its open loans use the rest"]);
  }
  if (!winner) throw new DomainError("INTERNAL", "idempotent insert lost its winner");
  return { loan: winner, created: false };
}
