import { encodeFunctionData, getAddress, type Address, type Hex } from "viem";
import { SIMULATED_OPERATOR } from "../chain-config.ts";
import { SVC_POOL_ABI } from "../evm/svc-pool-abi.ts";
import { loanIdToBytes32 } from "../loan-id.ts";
import { include } from "./sim-blocks.ts";
import { positiveAmount, type SimChainContext } from "./sim-chain-context.ts";
import type { SimFundInput, SimFundResult, SimTransaction } from "./sim-chain-ops.ts";
import { SimChainRejected } from "./sim-chain-rejected.ts";
import { execute } from "./sim-evm-execution.ts";
import { bumpNonce, fundingSent, move, recordFundingSent } from "./sim-ledger-store.ts";
import type { WorkingState } from "./sim-working-state.ts";

/**
 * The platform sends a loan's principal: on EVM the operator calls the pool's
 * `fund` (executed like any transaction, so its logs are the contract's), on
 * TON and Solana the funding wallet transfers with `svc:fund:<loanId>`.
 * Idempotent by `reference` once it succeeded.
 */
export async function fundFromPool(ctx: SimChainContext, state: WorkingState, input: SimFundInput): Promise<SimFundResult> {
  if (typeof input.reference !== "string" || input.reference === "") throw new SimChainRejected("reference must be a non-empty string");
  const sent = await fundingSent(state, input.reference);
  if (sent) return sent;
  const to = ctx.address(input.to, "to");
  const amount = positiveAmount(input.amount);
  const tx = ctx.config.family === "EVM" ? await fundByPoolCall(ctx, state, input, to as Address, amount) : await fundByTransfer(ctx, state, input, to, amount);
  const result: SimFundResult = { txHash: tx.hash, status: tx.status, blockNumber: tx.blockNumber, timestamp: tx.timestamp, failureReason: tx.failureReason };
  // Only a transfer that moved money answers for its reference: a failed one
  // moved nothing, so a retry (after the pool is topped up) may still send.
  if (result.status === "success") recordFundingSent(state, input.reference, result);
  return result;
}

async function fundByPoolCall(ctx: SimChainContext, state: WorkingState, input: SimFundInput, to: Address, amount: bigint): Promise<SimTransaction> {
  let loanId: Hex;
  try {
    loanId = loanIdToBytes32(input.loanId);
  } catch {
    throw new SimChainRejected(`loanId must be a UUID, not ${JSON.stringify(input.loanId)}`);
  }
  const operator = getAddress(SIMULATED_OPERATOR);
  const data = encodeFunctionData({ abi: SVC_POOL_ABI, functionName: "fund", args: [loanId, to, amount] });
  const outcome = await execute(ctx, state, { from: operator, to: ctx.pool(), data });
  await bumpNonce(state, operator);
  return include(ctx, state, ({ number, timestamp }) => ({
    family: "EVM",
    chain: ctx.chain,
    hash: ctx.syntheticHash("fund", number, input.reference),
    blockNumber: number,
    timestamp,
    from: operator,
    to: ctx.pool(),
    input: data,
    status: outcome.status,
    logs: outcome.status === "success" ? outcome.logs : [],
    sandboxTenantId: null,
    kind: "fund",
    failureReason: outcome.status === "reverted" ? outcome.reason : null,
  }));
}

async function fundByTransfer(ctx: SimChainContext, state: WorkingState, input: SimFundInput, to: string, amount: bigint): Promise<SimTransaction> {
  const source = ctx.config.fundingSource!;
  const failureReason = await move(ctx, state, ctx.stablecoin, source, to, amount);
  return include(ctx, state, ({ number, timestamp }) => ({
    family: ctx.transferFamily(),
    chain: ctx.chain,
    hash: ctx.syntheticHash("fund", number, input.reference),
    blockNumber: number,
    timestamp,
    from: source,
    to,
    token: ctx.stablecoin,
    amount,
    comment: `svc:fund:${input.loanId}`,
    status: failureReason ? "failed" : "success",
    sandboxTenantId: null,
    kind: "fund",
    failureReason,
  }));
}
