import { getAddress, isHex, keccak256, parseTransaction, recoverTransactionAddress, type Address, type TransactionSerialized } from "viem";
import type { EvmLog } from "../chain-port.ts";
import type { SimChainContext } from "./sim-chain-context.ts";
import type { SimEvmSubmitInput, SimEvmSubmitResult } from "./sim-chain-ops.ts";
import { SimChainRejected } from "./sim-chain-rejected.ts";
import { include, transactionByHash } from "./sim-blocks.ts";
import { stablecoinCall } from "./sim-erc20.ts";
import { Revert, type EvmCall } from "./sim-evm-call.ts";
import { hasHeld, nonce, setNonce } from "./sim-ledger-store.ts";
import { poolCall } from "./sim-pool.ts";
import type { WorkingState } from "./sim-working-state.ts";

export type EvmOutcome = { status: "success"; logs: EvmLog[] } | { status: "reverted"; reason: string };

/**
 * Includes a signed transaction as a node would: parsed and its sender
 * recovered with viem, EIP-155 chain id and nonce checked, then executed; a
 * revert is included too and changes nothing but the sender's nonce.
 */
export async function submitEvmTransaction(ctx: SimChainContext, state: WorkingState, input: SimEvmSubmitInput): Promise<SimEvmSubmitResult> {
  ctx.requireFamily("EVM", "submitEvmTransaction");
  const serialized = input.serializedTransaction;
  if (typeof serialized !== "string" || !isHex(serialized, { strict: true }) || serialized.length < 4) {
    throw new SimChainRejected("the transaction must be a 0x-prefixed hex string of a serialized transaction");
  }
  let parsed: ReturnType<typeof parseTransaction>;
  try {
    parsed = parseTransaction(serialized);
  } catch {
    throw new SimChainRejected("the transaction cannot be parsed as a serialized EVM transaction");
  }
  if (parsed.type !== "legacy" && parsed.type !== "eip2930" && parsed.type !== "eip1559") {
    throw new SimChainRejected(`${parsed.type} transactions are not supported`);
  }
  if (parsed.r === undefined || parsed.s === undefined) throw new SimChainRejected("the transaction is not signed");
  if (parsed.chainId === undefined) {
    throw new SimChainRejected("the transaction has no chain id (EIP-155 replay protection is required)");
  }
  if (parsed.chainId !== ctx.config.chainId) {
    throw new SimChainRejected(`the transaction is for chain id ${parsed.chainId}, not ${ctx.config.chainId} (${ctx.chain})`);
  }
  let from: Address;
  try {
    from = getAddress(await recoverTransactionAddress({ serializedTransaction: serialized as TransactionSerialized }));
  } catch {
    throw new SimChainRejected("the transaction's signature cannot be recovered");
  }

  // The same signed transaction sent again (a retried request) answers with its first inclusion.
  const hash = keccak256(serialized);
  const included = await transactionByHash(state, hash);
  if (included?.family === "EVM") {
    return { txHash: included.hash, status: included.status, blockNumber: included.blockNumber, from: included.from, revertReason: included.failureReason };
  }

  const expected = await nonce(state, from);
  if (input.requireFundedSender && expected === 0 && !(await hasHeld(state, ctx.stablecoin, from))) {
    throw new SimChainRejected(`${from} has never held ${ctx.config.token.symbol} on this ledger: fund it first`);
  }
  const sentNonce = parsed.nonce ?? 0;
  if (sentNonce !== expected) {
    // The sender's next nonce is not disclosed: a wallet keeps its own count.
    throw new SimChainRejected(`wrong nonce: ${sentNonce} is not the next nonce of ${from}`);
  }
  if ((parsed.value ?? 0n) !== 0n) {
    throw new SimChainRejected("the transaction sends native value, which the simulated chains do not have (value must be 0)");
  }

  const to = parsed.to ? getAddress(parsed.to) : null;
  const data = parsed.data ?? "0x";
  const outcome = await execute(ctx, state, { from, to, data });
  setNonce(state, from, expected + 1);
  const tx = await include(ctx, state, ({ number, timestamp }) => ({
    family: "EVM",
    chain: ctx.chain,
    hash,
    blockNumber: number,
    timestamp,
    from,
    to,
    input: data,
    status: outcome.status,
    logs: outcome.status === "success" ? outcome.logs : [],
    sandboxTenantId: input.sandboxTenantId ?? null,
    kind: "evm",
    failureReason: outcome.status === "reverted" ? outcome.reason : null,
  }));
  return { txHash: tx.hash, status: outcome.status, blockNumber: tx.blockNumber, from, revertReason: tx.failureReason };
}

/**
 * Runs a call against the two contracts this chain has code for. The writes
 * go to a fork of `state` that is merged only on success: a revert leaves
 * balances and allowances as they were.
 */
export async function execute(ctx: SimChainContext, state: WorkingState, call: EvmCall): Promise<EvmOutcome> {
  const fork = state.fork();
  try {
    const logs = await dispatch(ctx, fork, call);
    fork.mergeIntoParent();
    return { status: "success", logs: logs.map((log, logIndex) => ({ ...log, logIndex })) };
  } catch (error) {
    if (error instanceof Revert) return { status: "reverted", reason: error.message };
    throw error;
  }
}

/** Which code runs: chosen by the called address, as a chain does. */
async function dispatch(ctx: SimChainContext, state: WorkingState, { from, to, data }: EvmCall): Promise<EvmLog[]> {
  if (to === null) throw new Revert("contract creation is not simulated");
  if (to === ctx.stablecoin) return stablecoinCall(ctx, state, from, data);
  if (to === ctx.pool()) return poolCall(ctx, state, from, data);
  // Any other address has no code here: as on a real chain, the call succeeds and does nothing.
  return [];
}
