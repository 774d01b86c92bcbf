import { z } from "@hono/zod-openapi";
import { CHANNELS, FUNDING_STATES } from "../../../db/schema/loan-vocabularies.ts";
import { CHAINS, DECISION_OUTCOMES, LOAN_STATUSES, STABLECOINS } from "../../../shared/domain/vocabularies.ts";
import { TenureDaysSchema } from "../../../shared/schemas/merchant-config.ts";
import { AmountSchema } from "../../../shared/schemas/money.ts";
import { WalletBody } from "./params.ts";

/**
 * The embed API's request and response bodies, one definition for the routes
 * (validation, OpenAPI) and, through the types below, for the widget's
 * browser client, which imports them with `import type` only: a field the
 * client reads that the server does not send is a compile error.
 */

const ReasonSchema = z.object({ code: z.string(), message: z.string() });
const IsoTime = z.string().openapi({ example: "2026-11-21T10:00:00.000Z" });

export const EligibilitySchema = z.object({ walletAddress: z.string(), eligible: z.boolean(), reasons: z.array(ReasonSchema) });

export const BootstrapSchema = z.object({
  creditLine: z.object({ id: z.string(), walletAddress: z.string(), status: z.literal("ACTIVE"), limit: z.string(), available: z.string() }),
  requiresKyc: z.boolean(),
  agreementAccepted: z.boolean(),
  repayableLoans: z.array(z.object({ id: z.string(), status: z.enum(["ACTIVE", "DEFAULTED"]), dueAt: z.string().nullable() })).openapi({
    description:
      "The line's loans the borrower may repay now (ACTIVE or DEFAULTED), oldest first, at most 10: each has its hosted repay page, {embed_url}/embed/<key>/repay/<id>. Only with the wallet's session; without one, empty (typing an address shows nothing of its loans).",
  }),
});

export const QuoteBodySchema = z.object({ walletAddress: z.string().trim().min(1).max(128), amount: AmountSchema, tenureDays: TenureDaysSchema });

export const QuoteSchema = z.object({
  amount: z.string(),
  tenureDays: z.number().int(),
  processingFee: z.string().openapi({
    description: "FIXED as the merchant configured it, or PERCENTAGE of the amount rounded half up to the cent (2% of 333.33 is 6.67)",
    example: "2.00",
  }),
  totalDue: z.string(),
  dueAt: IsoTime,
  agreementChallenge: z.object({ id: z.string(), message: z.string(), expiresAt: IsoTime }),
});

/** TON Connect `signData` adds the wallet's key, the signature's timestamp and domain to a signature. */
const TonConnectFields = {
  publicKey: z.string().min(1).max(128).optional().openapi({ description: "TON Connect: the wallet's public key" }),
  timestamp: z.number().int().optional().openapi({ description: "TON Connect signData: the signature's timestamp (unix seconds)" }),
  domain: z.string().min(1).max(255).optional().openapi({ description: "TON Connect signData: the domain the wallet signed for" }),
};

export const AcceptBodySchema = z.object({
  walletAddress: z.string().trim().min(1).max(128),
  amount: AmountSchema,
  tenureDays: TenureDaysSchema,
  agreementChallengeId: z.string().min(1).max(64),
  // ERC-6492 signatures carry the wallet's factory call, so they run to a few KB.
  walletSignature: z.string().min(1).max(8192),
  channel: z.enum(CHANNELS).default("WEB"),
  idempotencyKey: z.string().min(1).max(255).optional().openapi({
    description:
      "Unique per program and wallet (the merchant's POST /v1/loans keys are another key space). Sent, it makes the accept retryable: the same key again, with the wallet's signature, answers 200 with the loan it made (also with a new quote's challenge). Without it, an accept whose challenge is already used is 400, the same body sent twice included: the challenge is single-use.",
  }),
  ...TonConnectFields,
});

/**
 * A loan as the borrower's screens see it: status, decision outcome, funding,
 * amounts, dates and the funding transaction. Nothing of the merchant's
 * (borrowerRef, borrowerId, idempotencyKey, loan product, policy version,
 * review) is in it.
 */
export const EmbedLoanSchema = z
  .object({
    id: z.string(),
    status: z.enum(LOAN_STATUSES),
    derivedStatus: z.enum([...LOAN_STATUSES, "DECLINED"]),
    borrowerWalletAddress: z.string(),
    chain: z.enum(CHAINS),
    stablecoin: z.enum(STABLECOINS),
    principalAmount: z.string(),
    processingFee: z.string(),
    lateFee: z.string(),
    dailyLateFee: z.string(),
    lateFeeDays: z.number().int(),
    totalDue: z.string(),
    amountPaid: z.string(),
    amountDue: z.string(),
    surplus: z.string(),
    tenureDays: z.number().int(),
    gracePeriodDays: z.number().int(),
    decision: z.object({ outcome: z.enum(DECISION_OUTCOMES), reasons: z.array(ReasonSchema) }).nullable(),
    fundingState: z.enum(FUNDING_STATES),
    overdue: z.boolean(),
    dueAt: IsoTime.nullable(),
    fundedAt: IsoTime.nullable(),
    repaidAt: IsoTime.nullable(),
    defaultedAt: IsoTime.nullable(),
    createdAt: IsoTime,
    updatedAt: IsoTime,
    program: z.string().nullable(),
    channel: z.enum(CHANNELS).nullable(),
    fundingTxHash: z.string().nullable(),
  })
  .openapi("EmbedLoan");

export const EmbedLoanResponseSchema = z.object({ loan: EmbedLoanSchema });

export const WalletSessionChallengeBodySchema = WalletBody;

export const WalletSessionChallengeSchema = z.object({ id: z.string(), message: z.string(), expiresAt: IsoTime });

export const OpenWalletSessionBodySchema = z.object({
  walletAddress: z.string().trim().min(1).max(128),
  challengeId: z.string().min(1).max(256),
  walletSignature: z.string().min(1).max(8192),
  ...TonConnectFields,
});

export const WalletSessionSchema = z.object({
  token: z.string().openapi({ description: "Send it as the header x-svc-wallet-session" }),
  expiresAt: IsoTime,
});

export type Eligibility = z.infer<typeof EligibilitySchema>;
export type Bootstrap = z.infer<typeof BootstrapSchema>;
export type QuoteBody = z.input<typeof QuoteBodySchema>;
export type Quote = z.infer<typeof QuoteSchema>;
export type AcceptBody = z.input<typeof AcceptBodySchema>;
export type EmbedLoan = z.infer<typeof EmbedLoanSchema>;
export type EmbedLoanResponse = z.infer<typeof EmbedLoanResponseSchema>;
export type WalletSessionChallenge = z.infer<typeof WalletSessionChallengeSchema>;
export type OpenWalletSessionBody = z.input<typeof OpenWalletSessionBodySchema>;
export type WalletSession = z.infer<typeof WalletSessionSchema>;
