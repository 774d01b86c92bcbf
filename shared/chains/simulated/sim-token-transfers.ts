import { include } from "./sim-blocks.ts";
import { positiveAmount, type SimChainContext } from "./sim-chain-context.ts";
import type { SimTransferInput, SimTransferResult } from "./sim-chain-ops.ts";
import { SimChainRejected } from "./sim-chain-rejected.ts";
import { hasHeld, move } from "./sim-ledger-store.ts";
import type { WorkingState } from "./sim-working-state.ts";

/**
 * TON and Solana: a jetton or SPL transfer with its text comment or memo (how
 * a repayment names its loan there). One that the sender cannot cover is
 * still included, as "failed", and moves nothing.
 */
export async function transferToken(ctx: SimChainContext, state: WorkingState, input: SimTransferInput): Promise<SimTransferResult> {
  if (ctx.config.family === "EVM") {
    throw new SimChainRejected(`${ctx.chain} is an EVM chain: submit a signed transaction calling the token's transfer instead`);
  }
  const from = ctx.address(input.from, "from");
  const to = ctx.address(input.to, "to");
  const amount = positiveAmount(input.amount);
  const token = ctx.token(input.token);
  // Only the service's own funding moves the platform's wallet (fundFromPool).
  if (ctx.isPlatformWallet(from)) throw new SimChainRejected(`from ${from} is the platform's settlement wallet; only funding moves its tokens`);
  if (input.requireFundedSender && !(await hasHeld(state, token, from))) {
    throw new SimChainRejected(`from ${from} has never held this token on this ledger: fund it first`);
  }
  const comment = input.comment ?? null;
  if (comment !== null && typeof comment !== "string") throw new SimChainRejected("comment must be a string");
  const failureReason = await move(ctx, state, token, from, to, amount);
  const tx = await include(ctx, state, ({ number, timestamp }) => ({
    family: ctx.transferFamily(),
    chain: ctx.chain,
    hash: ctx.syntheticHash("transfer", number, from, to, token, amount, comment),
    blockNumber: number,
    timestamp,
    from,
    to,
    token,
    amount,
    comment,
    status: failureReason ? "failed" : "success",
    sandboxTenantId: input.sandboxTenantId ?? null,
    kind: "transfer",
    failureReason,
  }));
  return { txHash: tx.hash, status: failureReason ? "failed" : "success", blockNumber: tx.blockNumber, failureReason };
}
