import { and, eq, sql } from "drizzle-orm";
import { type AgreementTerms, termsChanged, termsOf } from "../domain/agreement-terms.ts";
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "../../db/create-db.ts";
import { insertIf } from "../../db/guarded-writes.ts";
import { placeholderAs, preparedReads } from "../../db/prepared-batch.ts";
import { placeholderRow, preparedStatement } from "../../db/prepared-statements.ts";
import { borrowers } from "../../db/schema/borrowers.ts";
import { creditLines } from "../../db/schema/credit-lines.ts";
import type { CHANNELS } from "../../db/schema/loan-vocabularies.ts";
import { loanProducts } from "../../db/schema/loan-products.ts";
import { tenantSettings } from "../../db/schema/tenant-settings.ts";
import { loans, type LoanRow } from "../../db/schema/loans.ts";
import { agreementInsertIf, type AgreementRecord } from "../agreements/agreement-record.ts";
import { type AddressResult, canonicalAddress } from "../domain/addresses.ts";
import { type DeployedContracts, notAPayee } from "../chains/chain-config.ts";
import { strictlyAfter } from "../domain/clock.ts";
import { conflict, DomainError, forbidden, notFound, validationError } from "../domain/errors.ts";
import { newId, isUuid } from "../domain/ids.ts";
import { amountError, parseAmount, formatAmount, TICKET_CAP_UNITS } from "../domain/money.ts";
import { dailyLateFeeUnits, processingFeeUnits } from "../domain/pricing.ts";
import { isSandboxChain, modeOfChain, RAILS, type Chain, type Network, type Stablecoin, type TenantMode } from "../domain/rails.ts";
import { loanEnvelope, loanEventInsert } from "../events/loan-events.ts";
import type { LoadedTenant } from "../tenants/tenant-context.ts";
import type { VerbDeps } from "../verbs.ts";
import { loanCarries, newWriteToken } from "./loan-guard.ts";
import { loadLoan } from "./load-loan.ts";
import { openPrincipalOfLine } from "./open-loans.ts";
import { currentPolicyQuery, policyOf } from "../underwriting/policies.ts";
import { poolQuery, type PoolRow } from "../liquidity/pools.ts";
import { borrowerIdOfRef, decisionPlan, openLoansOfBorrowerQuery, type UnderwritingReads } from "./decide-loan.ts";
import { planTransition, transitionOutcome, type PlannedTransition } from "./commit-transition.ts";
import { reservationOnApproval } from "./fund-loan.ts";
import { notTheTenantsOwn, ownWalletsQuery } from "./own-wallets.ts";
import type { WalletRole } from "../domain/wallets.ts";

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
   * The terms that agreement states (a widget draw's, signed at its quote):
   * the loan is made only if the product, as creation reads it, gives the
   * same (400 otherwise, and no loan).
   */
  agreedTerms?: AgreementTerms;
  /**
   * The mode of the key that asks (DECISIONS.md "Modes"): an API key's, or
   * for a widget draw its program's embed key's. A sandbox key lends only on
   * sandbox chains, a live key only on live chains (403 otherwise).
   */
  keyMode?: TenantMode;
  /**
   * The deployment's own token and pool on the loan's chain (live-config.ts
   * `deployedContracts`; null on a sandbox chain or one not configured),
   * which a loan must not pay any more than the canonical ones (`notAPayee`).
   */
  deployed: DeployedContracts | null;
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

/** The tenant's ACTIVE loan product by id (nothing for another tenant's, or an id that is no UUID). */
const activeProductQuery = (db: Db, tenantId: string, productId: string) =>
  db
    .select()
    .from(loanProducts)
    .where(and(eq(loanProducts.id, productId), eq(loanProducts.tenantId, tenantId), eq(loanProducts.status, "ACTIVE")))
    .limit(1);

type ProductRow = Awaited<ReturnType<typeof activeProductQuery>>[number];

/**
 * Checks a loan request against its product and the tenant (SPEC.md "Chains",
 * "Limits"): chain of the rail (a live chain without certification: 403),
 * address valid for the chain (`address`, parsed) and neither the service's
 * (`notAPayee`) nor one of the tenant's own wallets there (`ownWallets`, as
 * creation read them), amount within the product's limits and the cap,
 * tenure among the product's. Returns the canonical values. A widget draw's
 * wallet is named `walletAddress`, as its accept calls it.
 */
function checkRequest(input: CreateLoanInput, product: ProductRow, tenant: LoanTenant, address: AddressResult, ownWallets: readonly { role: WalletRole }[]) {
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
  const refused = address.ok ? (notAPayee(input.chain, address.address, input.deployed) ?? notTheTenantsOwn(input.chain, ownWallets)) : address.reason;
  if (refused) errors.push(`${input.program ? "walletAddress" : "borrowerWalletAddress"}: ${refused}`);
  const principal = parseAmount(input.principalAmount, 2);
  if (principal === null || principal <= 0n) {
    errors.push(amountError("principalAmount"));
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

/** The borrower of a ref, with its KYC status, if the tenant has one already (borrowers are never deleted). */
const borrowerQuery = (db: Db, tenantId: string, borrowerRef: string) =>
  db
    .select({ id: borrowers.id, kycStatus: borrowers.kycStatus })
    .from(borrowers)
    .where(and(eq(borrowers.tenantId, tenantId), eq(borrowers.borrowerRef, borrowerRef)))
    .limit(1);

/** Whether the loan's borrower row is there (the loan's insert is conditional on it: a new borrower's insert may lose a race). */
const borrowerExists = (borrowerId: string) => sql`EXISTS (SELECT 1 FROM ${borrowers} WHERE ${borrowers.id} = ${borrowerId})`;

/**
 * The open principal of the row's program and wallet, plus the row's, is
 * within `limit` (evaluated by the insert itself). Amounts bind through the
 * principal column's encoder: D1 cannot bind a bigint.
 */
const withinCreditLimit = (row: LoanRow, limit: bigint) =>
  sql`${openPrincipalOfLine({ tenantId: row.tenantId, programId: row.programId!, walletAddress: row.borrowerWalletAddress })} + ${sql.param(row.principal, loans.principal)} <= ${sql.param(limit, loans.principal)}`;

/**
 * A draw's loan is booked under the borrower its line names when it commits: the merchant's KYC confirmation may
 * move a line without loans to its own `borrowerRef` while the line's first draw is made (credit-lines.ts).
 */
const lineStillNames = (row: LoanRow, borrowerRef: string) =>
  sql`NOT EXISTS (SELECT 1 FROM credit_lines WHERE credit_lines.program_id = ${row.programId} AND credit_lines.wallet_address = ${row.borrowerWalletAddress} AND credit_lines.borrower_ref <> ${borrowerRef})`;

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

const byKey = (tenantId: string, scope: string, key: string) =>
  and(eq(loans.tenantId, tenantId), eq(loans.idempotencyScope, scope), eq(loans.idempotencyKey, key));

/** The loan a key made in one key space of the tenant, if any. */
export const findLoanByKey = async (db: Db, tenantId: string, scope: string, key: string): Promise<LoanRow | undefined> =>
  (
    await db
      .select()
      .from(loans)
      .where(byKey(tenantId, scope, key))
      .limit(1)
  )[0];

/** What creation needs of the tenant: the caller's (a principal's, a program's) is enough; its KYC setting is read with the rest. */
export type LoanTenant = Pick<LoadedTenant, "id" | "mode" | "certifiedAt">;

/**
 * What creating a loan reads, in one batch built once per database
 * (db/prepared-batch.ts): the loan its key already made (only its id: a
 * repeated key is the rare case, and it reads the loan then), the active
 * product, the borrower of the ref (with its KYC status), the KYC setting;
 * and what its decision reads (decide-loan.ts): the current policy, the
 * borrower's open loans of the mode, and the pool of the product's
 * stablecoin that an approval reserves in; and the tenant's own wallets at
 * the borrower's address on the chain (`ownWalletsQuery`), which a loan may
 * not pay.
 */
const creationReads = preparedReads((db: Db) => {
  const tenantId = placeholderAs<string>("tenantId");
  const mode = placeholderAs<TenantMode>("mode");
  const productId = placeholderAs<string>("productId");
  const stablecoinOfProduct = sql`(SELECT ${loanProducts.stablecoin} FROM ${loanProducts} WHERE ${loanProducts.id} = ${productId} AND ${loanProducts.tenantId} = ${tenantId})`;
  return [
    db
      .select({ id: loans.id })
      .from(loans)
      .where(byKey(tenantId, placeholderAs<string>("scope"), placeholderAs<string>("key")))
      .limit(1),
    activeProductQuery(db, tenantId, productId),
    borrowerQuery(db, tenantId, placeholderAs<string>("borrowerRef")),
    db.select({ requiresKycBeforeFunding: tenantSettings.requiresKycBeforeFunding }).from(tenantSettings).where(eq(tenantSettings.tenantId, tenantId)).limit(1),
    currentPolicyQuery(db, tenantId),
    openLoansOfBorrowerQuery(db, { tenantId, borrowerId: borrowerIdOfRef(tenantId, placeholderAs<string>("borrowerRef")), mode }),
    poolQuery(db, { tenantId, mode }, stablecoinOfProduct as unknown as Stablecoin),
    ownWalletsQuery(db, { tenantId, chain: placeholderAs<Chain>("chain"), address: placeholderAs<string>("wallet") }),
  ] as const;
});

/**
 * The loan's decision, planned to commit in its insert's batch, after the
 * insert: underwriting on what creation read, with the reservation that an
 * approval brings (`reservationOnApproval`, as processing would make it).
 * The decision holds only if what it counted still holds when the batch
 * runs: the borrower's other open loans of the mode and the borrower's KYC
 * status are what was read. Otherwise (a loan of the same borrower
 * committed in between) the loan is created undecided and its writer
 * decides it on fresh reads, as it decides any undecided loan: two racing
 * loans of one borrower are never both approved on a count that left the
 * other out.
 */
function creationDecision(db: Db, row: LoanRow, reads: UnderwritingReads, pool: PoolRow | null, now: Date): PlannedTransition {
  const plan = decisionPlan({ loan: row, now, reads, followUp: reservationOnApproval(db, pool, now, reads) });
  const stillCounted = sql`(${openLoansOfBorrowerQuery(db, { tenantId: row.tenantId, borrowerId: row.borrowerId, mode: row.mode, otherThan: row.id })}) = ${reads.openLoansOfBorrower}`;
  const sameKyc = sql`COALESCE((SELECT ${borrowers.kycStatus} FROM ${borrowers} WHERE ${borrowers.id} = ${row.borrowerId}), 'PENDING') = ${reads.borrowerKycStatus}`;
  return planTransition(db, { ...plan, condition: and(stillCounted, sameKyc) });
}

/**
 * Creates the loan in status CREATED with `loan.application_submitted` and
 * its decision (`loan.decision`, with the reservation of an approved
 * sandbox loan's principal: `creationDecision`), or finds the loan this
 * idempotency key already created in its key space (`idempotencyScopeOf`).
 * The unique index on (tenant, scope, key) decides races: the insert is
 * `ON CONFLICT DO NOTHING` and everything else is written only if this
 * insert's row exists, so 25 simultaneous requests make one loan and one of
 * each event. Funding follows in the loan's writer (`processLoan`, given
 * the created row), as does the decision of a loan created undecided.
 *
 * Two D1 round trips: one batch of reads (the key's loan id, the product, the
 * borrower, the tenant's KYC setting, the policy, the borrower's open loans,
 * the pool, the tenant's own wallets at the address), then one batch that writes the borrower if new, the loan, its
 * event, its agreement and its decision. A new borrower's row is inserted
 * with an id chosen here (`ON CONFLICT DO NOTHING`) and the loan only if
 * that row is there; if another request created the borrower first, the
 * batch writes nothing and runs again with that borrower.
 */
export async function createLoan(
  { db }: Pick<VerbDeps, "db">,
  input: CreateLoanInput & { tenant: LoanTenant; now: Date },
): Promise<{ loan: LoanRow; created: boolean }> {
  const scope = idempotencyScopeOf(input);
  // Parsed before the reads, so they can look the tenant's own wallets up by the canonical address.
  const address = canonicalAddress(input.chain, input.borrowerWalletAddress);
  const [[existing], [product], [borrower], [settings], policy, [open], [pool], ownWallets] = await creationReads(db, {
    tenantId: input.tenant.id,
    scope,
    key: input.idempotencyKey,
    productId: input.loanProductId,
    borrowerRef: input.borrowerRef,
    mode: modeOfChain(input.chain),
    chain: input.chain,
    wallet: address.ok ? address.address : input.borrowerWalletAddress,
  });
  if (existing) return { loan: await loadLoan(db, input.tenant.id, existing.id), created: false };
  if (!isUuid(input.loanProductId) || !product) throw notFound("Loan product");
  const checked = checkRequest(input, product, input.tenant, address, ownWallets);
  const lateFee = { type: product.lateFeeType, value: product.lateFeeValue };
  const row: LoanRow = {
    id: newId(),
    tenantId: input.tenant.id,
    idempotencyKey: input.idempotencyKey,
    idempotencyScope: scope,
    loanProductId: product.id,
    borrowerId: borrower?.id ?? newId(),
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
    requiresKycGate: !input.program && (settings?.requiresKycBeforeFunding ?? false),
    kycConfirmedAt: null,
    agreementId: input.agreement?.id ?? null,
    programId: input.program?.id ?? null,
    channel: input.program?.channel ?? null,
    poolId: null,
    fundingTxHash: null,
    fundingFrom: null,
    fundingReservation: 0,
    dueAt: null,
    overdueAt: null,
    fundedAt: null,
    repaidAt: null,
    defaultedAt: null,
    defaultRecordedAt: null,
    writeToken: newWriteToken(),
    fundingRetryMark: null,
    sweepFailedAt: null,
    createdAt: input.now,
    updatedAt: input.now,
  };
  const changed = input.agreedTerms ? termsChanged(input.agreedTerms, termsOf(row)) : null;
  if (changed) throw validationError([changed]);
  const reads: UnderwritingReads = {
    policy: policyOf(policy),
    borrowerKycStatus: borrower?.kycStatus ?? "PENDING",
    openLoansOfBorrower: Number(open?.n ?? 0),
    requiresKycBeforeFunding: settings?.requiresKycBeforeFunding ?? false,
  };
  // The pool of the product's stablecoin and the loan's mode (the read's subquery); checked, as a snapshot must be.
  const fundingPool = pool && pool.stablecoin === product.stablecoin && pool.mode === row.mode ? pool : null;
  // Decided right after it is submitted: its `loan.decision` sorts after `loan.application_submitted`.
  const decidedAt = strictlyAfter(input.now, row.createdAt);
  const decide = (r: LoanRow) => creationDecision(db, r, reads, fundingPool, decidedAt);
  const inserted = await insertLoan(db, row, input, borrower === undefined, decide);
  if (inserted) return { loan: inserted, created: true };
  const winner = await findLoanByKey(db, input.tenant.id, scope, input.idempotencyKey);
  if (winner) return { loan: winner, created: false };
  if (borrower === undefined) {
    // Not the key: the borrower was created by another request in between. Once more, with that borrower.
    const [taken] = await borrowerQuery(db, input.tenant.id, input.borrowerRef);
    const again = taken ? await insertLoan(db, { ...row, borrowerId: taken.id }, input, false, decide) : null;
    if (again) return { loan: again, created: true };
    const late = await findLoanByKey(db, input.tenant.id, scope, input.idempotencyKey);
    if (late) return { loan: late, created: false };
  }
  if (input.program?.creditLimit !== undefined) {
    const [line] = await db
      .select({ borrowerRef: creditLines.borrowerRef })
      .from(creditLines)
      .where(and(eq(creditLines.programId, input.program.id), eq(creditLines.walletAddress, input.borrowerWalletAddress)))
      .limit(1);
    if (line && line.borrowerRef !== input.borrowerRef) throw conflict("The credit line's borrower changed while this draw was made; draw again");
    throw validationError(["amount: the credit line does not have this much available any more; its open loans use the rest"]);
  }
  throw new DomainError("INTERNAL", "idempotent insert lost its winner");
}

/**
 * The loan's insert when no credit line limits it (`POST /v1/loans`): only
 * if its borrower row is there, nothing on a repeated key, returning its id;
 * built once per database (db/prepared-statements.ts).
 */
const loanInsert = preparedStatement<LoanRow & { guardBorrowerId: string }>((db, p) =>
  insertIf(db, loans, placeholderRow(loans, p), borrowerExists(p("guardBorrowerId")))
    .onConflictDoNothing({ target: [loans.tenantId, loans.idempotencyScope, loans.idempotencyKey] })
    .returning({ id: loans.id }),
);

/**
 * One batch: the borrower (when new, under the row's `borrowerId`), then the
 * loan if its borrower row is there (and, for a draw, within the line's
 * limit), its `loan.application_submitted` and its agreement if the loan's
 * row is, then its decision (`decide`: a transition on the inserted row's
 * write token, so it commits only with the insert). The loan this batch
 * inserted (decided, and reserved, when the decision held), or null.
 */
async function insertLoan(
  db: Db,
  row: LoanRow,
  input: CreateLoanInput & { now: Date },
  newBorrower: boolean,
  decide: (row: LoanRow) => PlannedTransition,
): Promise<LoanRow | null> {
  const creditLimit = input.program?.creditLimit;
  const loan =
    creditLimit === undefined
      ? loanInsert(db, { ...row, guardBorrowerId: row.borrowerId })
      : insertIf(db, loans, row, and(borrowerExists(row.borrowerId), withinCreditLimit(row, creditLimit), lineStillNames(row, input.borrowerRef))!)
          .onConflictDoNothing({ target: [loans.tenantId, loans.idempotencyScope, loans.idempotencyKey] })
          .returning({ id: loans.id });
  const rest = [
    loanEventInsert(db, loanEnvelope("loan.application_submitted", row, input.now), row.id, row.writeToken),
    ...(input.agreement ? [agreementInsertIf(db, input.agreement, row, loanCarries(row.id, row.writeToken))] : []),
  ];
  const decision = decide(row);
  const borrowerInsert = newBorrower
    ? [
        db
          .insert(borrowers)
          .values({
            id: row.borrowerId,
            tenantId: row.tenantId,
            borrowerRef: row.borrowerRef,
            kycStatus: "PENDING",
            createdAt: input.now,
            updatedAt: input.now,
          })
          .onConflictDoNothing({ target: [borrowers.tenantId, borrowers.borrowerRef] }),
      ]
    : [];
  const head = [...borrowerInsert, loan, ...rest];
  const results = await db.batch([...head, ...decision.statements] as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  if ((results[borrowerInsert.length] as unknown[]).length !== 1) return null;
  // Inserted; decided too unless what the decision counted changed before the batch ran.
  return transitionOutcome(decision, results, head.length) ?? row;
}
