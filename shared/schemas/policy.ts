import { z } from "@hono/zod-openapi";
import { canonicalAddress } from "../domain/addresses.ts";
import { displayAmount, formatAmount, parseAmount, UNITS_PER_COIN } from "../domain/money.ts";
import type { Chain } from "../domain/rails.ts";
import { UNDERWRITING_RULES, type UnderwritingPolicy } from "../domain/underwriting.ts";
import { isoOrNull, TimestampSchema } from "./common.ts";
import { AmountSchema, toUnits } from "./money.ts";

export const MAX_BLOCKED_WALLETS = 1000;
/** Far above any ticket; keeps the threshold inside the database's exact integer range. */
const MAX_THRESHOLD_UNITS = 1_000_000_000n * UNITS_PER_COIN;
const AMOUNT_PATTERN = /^\d+(\.\d{1,2})?$/;

/**
 * One chain per address family, tried in this order. A blocked wallet is not
 * tied to a chain (the policy applies to every rail), and the families'
 * syntaxes do not overlap (`0x…` and `0:…` are not base58; a 48-character
 * TON address is too long for 32 bytes of base58), so the first family that
 * accepts an address is the only one.
 */
const FAMILY_CHAINS: readonly Chain[] = ["POLYGON", "TON", "SOLANA_DEVNET"];

/**
 * The canonical form a loan's `borrowerWalletAddress` takes on its chain
 * (EIP-55 for EVM, raw `0:<hex>` for TON, base58 for Solana), so that a
 * blocked entry matches however the merchant typed it. Null: no family accepts it.
 *
 * @example canonicalWalletAnyChain("0xd8da6bf26964af9d7eed9e03e53415d37aa96045") // "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045"
 */
export function canonicalWalletAnyChain(input: string): string | null {
  for (const chain of FAMILY_CHAINS) {
    const result = canonicalAddress(chain, input);
    if (result.ok) return result.address;
  }
  return null;
}

/** The rule order as the documentation prints it, built from the rules so the two cannot drift. */
export const RULES_TEXT = UNDERWRITING_RULES.map((r) => `${r.order}. \`${r.code}\` (${r.effect}): ${r.description}`).join("\n");

/** PUT /v1/policies: a full replacement; every key is required. */
export const PolicyBodySchema = z
  .object({
    requireKycVerified: z.boolean().openapi({ description: "Decline borrowers whose KYC status is not VERIFIED (rule KYC_NOT_VERIFIED)." }),
    manualReviewAbove: AmountSchema.refine(
      // Runs after the pattern even when it failed: a refused string is reported once, by the pattern.
      (s) => {
        const units = parseAmount(s, 2);
        return units === null ? !AMOUNT_PATTERN.test(s) : units <= MAX_THRESHOLD_UNITS;
      },
      `must be at most ${formatAmount(MAX_THRESHOLD_UNITS)}`,
    )
      .nullable()
      .openapi({ description: "A principal strictly above this goes to MANUAL_REVIEW (rule MANUAL_REVIEW_AMOUNT); null: never.", example: "500.00" }),
    maxOpenLoansPerBorrower: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .nullable()
      .openapi({ description: "Decline a borrower who already has this many open loans (rule MAX_OPEN_LOANS); null: no cap.", example: 3 }),
    blockedWallets: z
      .array(
        z
          .string()
          .trim()
          // Every family bounds the length itself (at most 66 characters), so no separate max is needed.
          .refine((s) => canonicalWalletAnyChain(s) !== null, "is not a wallet address of any supported chain (EVM 0x…, TON EQ…/UQ…/0:…, Solana base58)"),
      )
      .max(MAX_BLOCKED_WALLETS)
      .openapi({ description: `At most ${MAX_BLOCKED_WALLETS} addresses of any chain (rule WALLET_BLOCKED); stored canonical and deduplicated.` }),
  })
  .openapi("PolicyRequest");

export type PolicyBody = z.infer<typeof PolicyBodySchema>;

const RuleSchema = z
  .object({
    code: z.string().openapi({ example: "KYC_NOT_VERIFIED" }),
    order: z.number().int(),
    effect: z.enum(["DECLINE", "REVIEW"]),
    description: z.string(),
  })
  .openapi("UnderwritingRule");

export const PolicySchema = z
  .object({
    version: z.number().int().openapi({ description: "Every PUT makes a new version; every loan decision names the version it used.", example: 2 }),
    requireKycVerified: z.boolean(),
    manualReviewAbove: z.string().nullable().openapi({ example: "500.00" }),
    maxOpenLoansPerBorrower: z.number().int().nullable(),
    blockedWallets: z.array(z.string()),
    createdAt: TimestampSchema.nullable().openapi({
      description: "When this version was saved; null for a tenant that never stored one (the default policy).",
    }),
    rules: z.array(RuleSchema).openapi({ description: "The rules in evaluation order." }),
  })
  .openapi("Policy");

/** Turns a validated body into the policy to store: amounts in base units, wallets canonical and unique. */
export function policyFromBody(body: PolicyBody): Omit<UnderwritingPolicy, "version"> {
  const wallets = body.blockedWallets.map((w) => canonicalWalletAnyChain(w)!);
  return {
    requireKycVerified: body.requireKycVerified,
    manualReviewAbove: body.manualReviewAbove === null ? null : toUnits(body.manualReviewAbove),
    maxOpenLoansPerBorrower: body.maxOpenLoansPerBorrower,
    blockedWallets: [...new Set(wallets)],
  };
}

/** A threshold stored by an older writer may carry more than 2 decimals; show it exactly rather than throw. */

export const policyView = (p: UnderwritingPolicy & { createdAt: Date | null }) => ({
  version: p.version,
  requireKycVerified: p.requireKycVerified,
  manualReviewAbove: p.manualReviewAbove === null ? null : displayAmount(p.manualReviewAbove),
  maxOpenLoansPerBorrower: p.maxOpenLoansPerBorrower,
  blockedWallets: p.blockedWallets,
  createdAt: isoOrNull(p.createdAt),
  rules: UNDERWRITING_RULES.map((r) => ({ code: r.code, order: r.order, effect: r.effect, description: r.description })),
});
