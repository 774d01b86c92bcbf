import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { creditLines } from "../../db/schema/credit-lines.ts";
import { loans } from "../../db/schema/loans.ts";
import { widgetPrograms } from "../../db/schema/widget-programs.ts";
import { embedKeyMode } from "../auth/api-keys.ts";
import { findBorrower, setBorrowerKyc } from "../borrowers/borrower-verbs.ts";
import { canonicalAddress } from "../domain/addresses.ts";
import { conflict, notFound, validationError } from "../domain/errors.ts";
import { isUuid, newId } from "../domain/ids.ts";
import type { Chain, TenantMode } from "../domain/rails.ts";
import type { KycStatus } from "../domain/underwriting.ts";
import { openPrincipalOfLine } from "../loans/open-loans.ts";
import { currentPolicy } from "../underwriting/policies.ts";
import type { VerbDeps } from "../verbs.ts";
import type { ProgramContext } from "./program-context.ts";

export type CreditLineRow = typeof creditLines.$inferSelect;

/** The wallet in the program chain's canonical form, or 400 naming `walletAddress`. */
export function walletFor(chain: Chain, walletAddress: string): string {
  const parsed = canonicalAddress(chain, walletAddress);
  if (!parsed.ok) throw validationError([`walletAddress: ${parsed.reason}`]);
  return parsed.address;
}

/** The durable credit line of (program, wallet), created on first use. */
export async function creditLineFor(
  { db }: Pick<VerbDeps, "db">,
  { program, wallet, now }: { program: ProgramContext; wallet: string; now: Date },
): Promise<CreditLineRow> {
  await db
    .insert(creditLines)
    .values({
      id: newId(),
      tenantId: program.tenant.id,
      programId: program.program.id,
      walletAddress: wallet,
      chain: program.chain,
      borrowerRef: `wallet:${wallet}`,
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoNothing();
  const [line] = await db
    .select()
    .from(creditLines)
    .where(and(eq(creditLines.programId, program.program.id), eq(creditLines.walletAddress, wallet)))
    .limit(1);
  return line!;
}

/**
 * Whether the borrower must pass the merchant's KYC before drawing: when the
 * tenant gates funding on KYC or its policy requires VERIFIED KYC, until the
 * merchant's backend confirms it for this credit line.
 */
export async function requiresKyc({ db }: Pick<VerbDeps, "db">, { program, line }: { program: ProgramContext; line: CreditLineRow }): Promise<boolean> {
  if (line.kycConfirmedAt) return false;
  return programRequiresKyc({ db }, { program });
}

/** Whether a new credit line of the program must pass the merchant's KYC: a rule of the tenant, the same for every wallet. */
export async function programRequiresKyc({ db }: Pick<VerbDeps, "db">, { program }: { program: ProgramContext }): Promise<boolean> {
  if (program.settings.requiresKycBeforeFunding) return true;
  return (await currentPolicy(db, program.tenant.id)).requireKycVerified;
}

/** Principal of the line's loans still open (CREATED not declined, ACTIVE, DEFAULTED). */
async function outstanding(db: Db, line: CreditLineRow): Promise<bigint> {
  const [row] = await db
    .select({ total: openPrincipalOfLine(line) })
    .from(creditLines)
    .where(eq(creditLines.id, line.id));
  return BigInt(row?.total ?? 0);
}

/** At most this many of a line's repayable loans are listed (a line's draws are few: its limit is one maximum ticket). */
const REPAYABLE_LISTED = 10;

/**
 * The line's loans the borrower may repay now (ACTIVE or DEFAULTED), oldest
 * first: what the widget links to the hosted repay page, so a borrower
 * whose line is fully drawn can reach them (it said "repay your open loan"
 * with no way there).
 */
async function repayableLoans(db: Db, line: CreditLineRow) {
  const rows = await db
    .select({ id: loans.id, status: loans.status, dueAt: loans.dueAt })
    .from(loans)
    .where(
      and(
        eq(loans.tenantId, line.tenantId),
        eq(loans.programId, line.programId),
        eq(loans.borrowerWalletAddress, line.walletAddress),
        inArray(loans.status, ["ACTIVE", "DEFAULTED"]),
      ),
    )
    // Insertion order breaks a tie of one millisecond.
    .orderBy(asc(loans.createdAt), asc(sql`rowid`))
    .limit(REPAYABLE_LISTED);
  return rows.map((r) => ({ id: r.id, status: r.status as "ACTIVE" | "DEFAULTED", dueAt: r.dueAt ? r.dueAt.toISOString() : null }));
}

/** A credit line's limit: the program's product's maximum ticket. */
export const creditLimitOf = (program: ProgramContext): bigint => program.product.maxTicket;

/** The line as the widget sees it: its limit, and `available`, what is not drawn. */
export async function creditLineView({ db }: Pick<VerbDeps, "db">, { program, line }: { program: ProgramContext; line: CreditLineRow }) {
  const limit = creditLimitOf(program);
  const used = await outstanding(db, line);
  return { id: line.id, walletAddress: line.walletAddress, status: "ACTIVE" as const, limit, available: limit > used ? limit - used : 0n };
}

/**
 * The wallet's credit line as bootstrap shows it (DECISIONS.md "bootstrap").
 * `requiresKyc` and `agreementAccepted` are the line's own to every caller:
 * DECISIONS.md has `requiresKyc` turn false once the merchant confirms KYC,
 * and later draws skip both steps, which is what a merchant's page or
 * backend that asks bootstrap (without a wallet session) must see. What the
 * wallet has drawn is exact only to a caller with its wallet session: to
 * anyone else `available` is the whole limit, so typing an address does not
 * disclose its open loans.
 */
export async function bootstrapCreditLine(
  { db }: Pick<VerbDeps, "db">,
  { program, walletAddress, now, walletSession }: { program: ProgramContext; walletAddress: string; now: Date; walletSession: boolean },
) {
  const line = await creditLineFor({ db }, { program, wallet: walletFor(program.chain, walletAddress), now });
  if (!walletSession) {
    const limit = creditLimitOf(program);
    return {
      creditLine: { id: line.id, walletAddress: line.walletAddress, status: "ACTIVE" as const, limit, available: limit },
      requiresKyc: await requiresKyc({ db }, { program, line }),
      agreementAccepted: line.agreementAcceptedAt !== null,
      repayableLoans: [],
    };
  }
  return {
    creditLine: await creditLineView({ db }, { program, line }),
    requiresKyc: await requiresKyc({ db }, { program, line }),
    agreementAccepted: line.agreementAcceptedAt !== null,
    repayableLoans: await repayableLoans(db, line),
  };
}

/**
 * The merchant's backend confirms KYC for a widget borrower (DECISIONS.md
 * `POST /v1/credit-lines/:id/kyc-confirmation`): with `verified` the line stops
 * requiring KYC, its loans are booked under `borrowerRef` when given, and that
 * borrower's KYC is recorded VERIFIED (with its audit row), so underwriting
 * that requires VERIFIED KYC approves the draw.
 */
export async function confirmCreditLineKyc(
  { db }: Pick<VerbDeps, "db">,
  input: {
    tenantId: string;
    /** An API key's mode: a line of a program of the other mode is not found (DECISIONS.md "Modes"). */
    mode?: TenantMode;
    id: string;
    verified: boolean;
    merchantUserId: string | null;
    reference: string | null;
    borrowerRef: string | null;
    actor: string;
    now: Date;
    /**
     * Whether the borrower's KYC, which both modes share, is set too. False for a sandbox key once the tenant is
     * certified (live loans depend on that status): the sandbox line is confirmed, and the borrower keeps its status.
     */
    setsBorrowerKyc?: boolean;
  },
): Promise<{ line: CreditLineRow; borrowerKycStatus: KycStatus | null }> {
  if (!isUuid(input.id)) throw notFound("Credit line");
  const [line] = await db
    .select()
    .from(creditLines)
    .where(and(eq(creditLines.id, input.id), eq(creditLines.tenantId, input.tenantId)))
    .limit(1);
  if (!line) throw notFound("Credit line");
  if (input.mode) {
    const [program] = await db.select({ embedKey: widgetPrograms.embedKey }).from(widgetPrograms).where(eq(widgetPrograms.id, line.programId)).limit(1);
    if (!program || embedKeyMode(program.embedKey) !== input.mode) throw notFound("Credit line");
  }
  if (input.borrowerRef && line.agreementAcceptedAt && input.borrowerRef !== line.borrowerRef) {
    throw conflict("The credit line already has loans under its borrower; its borrowerRef can no longer change");
  }
  const borrowerRef = input.borrowerRef ?? line.borrowerRef;
  // A new ref only while the line has no loan, checked in the update itself: the line's first draw may be committing
  // its loan under the ref read before (draw.ts; its insert is guarded the other way round, create-loan.ts).
  const movesRef = borrowerRef !== line.borrowerRef;
  const [updated] = await db
    .update(creditLines)
    .set({
      borrowerRef,
      kycConfirmedAt: input.verified ? (line.kycConfirmedAt ?? input.now) : null,
      kycMerchantUserId: input.merchantUserId,
      kycReference: input.reference,
      updatedAt: input.now,
    })
    .where(
      and(
        eq(creditLines.id, line.id),
        movesRef
          ? sql`${creditLines.borrowerRef} = ${line.borrowerRef} AND ${creditLines.agreementAcceptedAt} IS NULL AND NOT EXISTS (SELECT 1 FROM loans WHERE loans.tenant_id = ${input.tenantId} AND loans.program_id = ${line.programId} AND loans.borrower_wallet_address = ${line.walletAddress})`
          : undefined,
      ),
    )
    .returning();
  if (!updated)
    throw conflict("The credit line changed meanwhile (a loan was drawn under its borrower, or its borrowerRef was set): read it and confirm again");
  if (input.setsBorrowerKyc === false) {
    return { line: updated!, borrowerKycStatus: (await findBorrower(db, input.tenantId, borrowerRef))?.kycStatus ?? null };
  }
  const { borrower } = await setBorrowerKyc(
    { db },
    {
      tenantId: input.tenantId,
      idOrRef: borrowerRef,
      status: input.verified ? "VERIFIED" : "FAILED",
      merchantUserId: input.merchantUserId ?? "credit-line-confirmation",
      actor: input.actor,
      now: input.now,
    },
  );
  return { line: updated!, borrowerKycStatus: borrower.kycStatus };
}
