import { z } from "@hono/zod-openapi";
import { plainText } from "./plain-text.ts";
import { CHANNELS, FUNDING_STATES } from "../../db/schema/loan-vocabularies.ts";
import { DECISION_OUTCOMES, LOAN_STATUSES } from "../domain/vocabularies.ts";
import { CHAINS, TENANT_MODES } from "../domain/rails.ts";
import { TimestampSchema } from "./common.ts";
import { AmountSchema } from "./money.ts";
import { ChainSchema, StablecoinSchema, TenureDaysSchema } from "./merchant-config.ts";
import { canonicalAddress } from "../domain/addresses.ts";
import { notAPayee } from "../chains/chain-config.ts";
import { TENURES } from "../domain/merchant-config.ts";

const Money = z.string().openapi({ example: "100.00", description: "Decimal string, 2 decimals" });
const NullableTime = TimestampSchema.nullable();

export const CreateLoanSchema = z
  .object({
    loanProductId: z.string().min(1).max(64).openapi({ description: "`loanProductId` of a merchant configuration (GET /v1/me)" }),
    // Shown in the dashboard, notifications and e-mails (shared/domain/plain-text.ts).
    borrowerRef: plainText(255).openapi({
      description: "Your own reference for the borrower (plain text: no control, invisible or bidirectional formatting characters, no line separators)",
      example: "user-42",
    }),
    borrowerWalletAddress: z.string().trim().min(1).max(128).openapi({
      description:
        "Where the principal goes. EVM: 0x + 40 hex (mixed case must pass EIP-55); TON: EQ…/UQ… (checked, with its CRC) or raw 0:<64 hex>, basechain only (a masterchain -1 account: 400); Solana: base58 of 32 bytes. Stored and returned canonical (EIP-55; TON raw `0:<hex>`).",
      example: "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
    }),
    chain: z.enum(CHAINS).openapi({
      description:
        "The product rail's chain in the API key's mode: a sandbox key (svc_test_…) lends on POLYGON_AMOY, BASE_SEPOLIA, TON_TESTNET (SOLANA_DEVNET for USDC products), a live key (svc_live_…) on POLYGON, BASE, TON; the other mode's chain: 403",
    }),
    principalAmount: AmountSchema,
    idempotencyKey: z
      .string()
      .min(1)
      .max(255)
      .openapi({ description: "Sent on every creation call; the same key returns the original loan (200)", example: "order-1234" }),
    tenureDays: TenureDaysSchema.optional().openapi({ description: "One of the product's tenures (3, 7, 15); default its shortest", example: 7 }),
  })
  // The checks that need no product, run even when other fields failed, so one 400 names every bad field it can (DECISIONS.md "Errors").
  .superRefine(
    (body, ctx) => {
      const address = canonicalAddress(body.chain, body.borrowerWalletAddress.trim());
      const refused = address.ok ? notAPayee(body.chain, address.address) : address.reason;
      if (refused) ctx.addIssue({ code: "custom", path: ["borrowerWalletAddress"], message: refused });
      if (typeof body.tenureDays === "number" && !(TENURES as readonly number[]).includes(body.tenureDays)) {
        ctx.addIssue({ code: "custom", path: ["tenureDays"], message: `must be one of ${TENURES.join(", ")}` });
      }
    },
    {
      when: ({ value }: { value: unknown }) => {
        const v = value as { chain?: unknown; borrowerWalletAddress?: unknown } | null;
        return typeof v?.borrowerWalletAddress === "string" && (CHAINS as readonly unknown[]).includes(v.chain);
      },
    } as never,
  )
  .openapi("CreateLoanRequest");

export const DecisionSchema = z
  .object({
    outcome: z.enum(DECISION_OUTCOMES),
    reasons: z.array(z.object({ code: z.string(), message: z.string() })),
    policyVersion: z.number().int().nullable(),
    decidedAt: NullableTime,
    reviewedBy: z.string().nullable(),
    reviewedAt: NullableTime,
    reviewNote: z.string().nullable(),
  })
  .openapi("Decision");

export const LoanAgreementSchema = z
  .object({
    id: z.uuid(),
    challengeId: z.string(),
    walletAddress: z.string(),
    chain: ChainSchema,
    message: z.string().openapi({ description: "The exact challenge message the wallet signed" }),
    agreementText: z
      .string()
      .openapi({ description: "The agreement text kept: the merchant's `agreementText` when given (API loans), else the signed message" }),
    walletSignature: z.string().openapi({ description: "The signature as submitted (EIP-191 hex, Solana base58/base64, TON Connect base64)" }),
    publicKey: z.string().nullable().openapi({ description: "TON Connect signData: the wallet's public key (null on other chains)" }),
    timestamp: z.number().int().nullable().openapi({ description: "TON Connect signData: the signature's timestamp, unix seconds (null on other chains)" }),
    domain: z.string().nullable().openapi({ description: "TON Connect signData: the domain the wallet signed for (null on other chains)" }),
    createdAt: TimestampSchema,
  })
  .openapi("LoanAgreement", {
    description:
      "The agreement the borrower's wallet signed, kept immutably: for API loans the one recorded with POST /v1/loans/{id}/agreement, for widget loans the draw's accepted challenge.",
  });

export const LoanSchema = z
  .object({
    id: z.uuid(),
    status: z.enum(LOAN_STATUSES),
    derivedStatus: z.enum([...LOAN_STATUSES, "DECLINED"]).openapi({ description: "DECLINED for a declined loan (its status stays CREATED)" }),
    loanProductId: z.string(),
    borrowerId: z.string(),
    borrowerRef: z.string(),
    borrowerWalletAddress: z.string(),
    chain: ChainSchema,
    mode: z
      .enum(TENANT_MODES)
      .openapi({ description: 'sandbox or live, from the chain (DECISIONS.md "Modes"); its events, settlements and notifications carry it' }),
    stablecoin: StablecoinSchema,
    principalAmount: Money,
    processingFee: Money.openapi({
      description: "The product's processing fee: FIXED as configured, or PERCENTAGE of the principal rounded half up to the cent (2% of 333.33 is 6.67)",
    }),
    lateFee: Money.openapi({ description: "Late fees accrued so far (per started day past dueAt, until repaid or defaulted)" }),
    dailyLateFee: Money.openapi({
      description:
        "The late fee of one started day: FIXED as configured, or PERCENTAGE of the principal rounded half up to the cent once (0.33% of 333.33 is 1.10 a day)",
    }),
    lateFeeDays: z.number().int(),
    totalDue: Money.openapi({ description: "principal + processing fee + accrued late fees, now" }),
    amountPaid: z.string().openapi({
      description: "Repaid so far. 2 decimals like every amount; all 6 only when it is not a whole number of cents (an on-chain payment need not be)",
      example: "50.00",
    }),
    amountDue: z.string().openapi({
      description:
        "What remains due now: totalDue − amountPaid once the loan is funded (0.00 once repaid, and 0.00 before funding: a declined loan, or one waiting for KYC, review or liquidity, owes nothing). 2 decimals; all 6 only after a payment of sub-cent units",
      example: "52.00",
    }),
    surplus: z
      .string()
      .openapi({ description: "Received beyond the total due; refundable to the borrower. 2 decimals, or 6 (as amountPaid)", example: "0.00" }),
    tenureDays: z.number().int(),
    gracePeriodDays: z.number().int(),
    decision: DecisionSchema.nullable(),
    fundingState: z.enum(FUNDING_STATES),
    kycGate: z.object({ required: z.boolean(), kycConfirmed: z.boolean(), agreementRecorded: z.boolean() }),
    overdue: z.boolean(),
    dueAt: NullableTime,
    fundedAt: NullableTime,
    repaidAt: NullableTime,
    defaultedAt: NullableTime,
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
    idempotencyKey: z.string(),
    program: z.string().nullable(),
    channel: z.enum(CHANNELS).nullable(),
    fundingTxHash: z.string().nullable(),
    agreement: LoanAgreementSchema.nullable().optional().openapi({
      description:
        "The signed agreement (null: none on file). Present on GET /v1/loans/{id} and the agreement response; omitted from lists and event payloads (fetch the loan).",
    }),
  })
  .openapi("Loan");

export const LoanIdParamSchema = z.object({
  id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "id", in: "path" }, example: "5b0e1c0a-6f7d-4c1e-9a3b-2f1d0c9e8a7b" }),
});
