import { z } from "@hono/zod-openapi";
import { chainConfig } from "../../../../shared/chains/chain-config.ts";
import { effectiveChainConfig, type LiveChains } from "../../../../shared/chains/live/live-config.ts";
import { canonicalAddress } from "../../../../shared/domain/addresses.ts";
import { displayAmount } from "../../../../shared/domain/money.ts";
import type { Chain } from "../../../../shared/domain/rails.ts";
import { modeOfChain, TENANT_MODES } from "../../../../shared/domain/rails.ts";
import { TimestampSchema } from "../../../../shared/schemas/common.ts";
import type { UnmatchedRow } from "../../../../shared/settlement/unmatched-verbs.ts";

export const UnmatchedSchema = z
  .object({
    id: z.uuid(),
    chain: z.string(),
    mode: z.enum(TENANT_MODES).openapi({ description: 'Its chain\'s mode (DECISIONS.md "Modes").' }),
    txHash: z.string(),
    logIndex: z.number().int(),
    blockNumber: z.number().int(),
    from: z.string(),
    to: z.string(),
    token: z.string(),
    amount: z.string().openapi({
      description:
        "What arrived, in its own asset's units: the settlement stablecoin with 2 decimals, or 6 when it is not a whole number of cents; TON (`token` TON) in TON with up to 9 decimals; another jetton (`token` its jetton wallet, decimals unknown) as the integer count of its base units",
    }),
    asset: z.string().nullable().openapi({
      description: "The asset `amount` is in: the chain's stablecoin (USDC, USDT), TON, or null for another jetton (its base units)",
      example: "USDT",
    }),
    comment: z.string().nullable(),
    claimedLoanId: z.string().nullable().openapi({ description: "The loan the payment named (Repaid log or comment), if any" }),
    reason: z.string(),
    settles: z.boolean().openapi({
      description:
        "Whether the payment is in the chain's settlement asset and can be attributed to a loan. False for a TON transfer or a jetton notification from a wallet other than the canonical USDT jetton wallet: kept for the record, attributing it answers 409.",
    }),
    attributedLoanId: z.string().nullable(),
    attributedAt: TimestampSchema.nullable(),
    attributedBy: z.string().nullable(),
    paidAt: TimestampSchema.openapi({
      description:
        "When the payment was made: its block's time, on the tenant's clock of the chain's mode (a sandbox ledger's blocks carry the tenant's sandbox time). An attribution judges the payment at this time (late fees as of then), never before the loan was funded.",
    }),
    createdAt: TimestampSchema.openapi({ description: "When the service kept the payment." }),
  })
  .openapi("UnmatchedPayment");

/**
 * Whether the payment is in the chain's stablecoin: every attributable one,
 * and one kept unattributable but in it (an amount too large to store, kept
 * as 0). The stablecoin as this deployment configures it on a live chain
 * (`POLYGON_TOKEN_ADDRESS`…), as the listener that kept it read it.
 */
function inStablecoin(r: UnmatchedRow, live: LiveChains): boolean {
  if (r.settles) return true;
  const chain = r.chain as Chain;
  const token = canonicalAddress(chain, r.token);
  const stablecoin = canonicalAddress(chain, effectiveChainConfig(chain, live).token.address);
  return token.ok && stablecoin.ok && token.address === stablecoin.address;
}

/** Nanotons in one TON. */
const NANO_PER_TON = 1_000_000_000n;

/**
 * An unmatched payment's amount in its own asset: only the settlement
 * stablecoin is in 10^-6 units. A TON transfer is kept in nanotons (3 TON
 * read "3000.00" before), and another jetton in base units of decimals
 * unknown here.
 */
function amountOf(r: UnmatchedRow, live: LiveChains): string {
  if (inStablecoin(r, live)) return displayAmount(r.amount);
  if (r.token !== "TON") return r.amount.toString();
  const frac = (r.amount % NANO_PER_TON).toString().padStart(9, "0").replace(/0+$/, "").padEnd(2, "0");
  return `${r.amount / NANO_PER_TON}.${frac}`;
}

export const unmatchedView = (r: UnmatchedRow, live: LiveChains = {}) => ({
  id: r.id,
  chain: r.chain,
  mode: modeOfChain(r.chain),
  txHash: r.txHash,
  logIndex: r.logIndex,
  blockNumber: r.blockNumber,
  from: r.fromAddress,
  to: r.toAddress,
  token: r.token,
  amount: amountOf(r, live),
  asset: inStablecoin(r, live) ? chainConfig(r.chain as Chain).token.symbol : r.token === "TON" ? "TON" : null,
  comment: r.comment,
  claimedLoanId: r.claimedLoanId,
  reason: r.reason,
  settles: r.settles,
  attributedLoanId: r.attributedLoanId,
  attributedAt: r.attributedAt ? r.attributedAt.toISOString() : null,
  attributedBy: r.attributedBy,
  paidAt: r.paidAt.toISOString(),
  createdAt: r.createdAt.toISOString(),
});
