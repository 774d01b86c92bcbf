import { type Address, type Hex, keccak256, type PublicClient } from "viem";
import type { PrivateKeyAccount } from "viem/accounts";
import { chainConfig } from "../../chain-config.ts";
import type { LiveChainSettings } from "../../live/live-config.ts";
import { broadcastOutcome, safeRpcReason } from "./evm-broadcast-errors.ts";
import type { EvmSenderLedger } from "./evm-send-record.ts";

/** A plain transfer of nothing to an externally owned account: the gas it always costs. */
const SELF_TRANSFER_GAS = 21_000n;
/** The filler bids this many times the chain's current fee estimate: it is never replaced, so it must not stall on fees. */
const FILLER_FEE_MULTIPLIER = 2n;

export type GapFill = {
  settings: LiveChainSettings;
  client: PublicClient;
  ledger: EvmSenderLedger;
  from: Address;
  /** The missing nonce: the node's pending count (every nonce below it is mined or in the pool), below the transfer waiting on it. */
  nonce: number;
  /** The sender's signer, asked for only when a filler must be signed. */
  account: () => Promise<PrivateKeyAccount | { reason: string }>;
  now: Date;
};

/**
 * Fills a nonce gap of one sender: a nonce its book gave back (a refused
 * broadcast) that no claim has taken since, with a transfer signed above it
 * waiting for it. Without this, that transfer waited until the wallet's next
 * claim took the freed nonce, which never came when the refused loan was not
 * sent from this wallet again. The filler is a zero-value transaction to the
 * sender itself: it moves no stablecoin and costs 21,000 gas. It is recorded
 * in the book under `gap:<nonce>` like any transfer (a refusal gives the
 * nonce back, a lost answer keeps it), and sent again unchanged while the
 * node has not mined it. Answers what was done, for the waiting transfer's
 * detail; never throws for the node.
 */
export async function fillNonceGap(fill: GapFill): Promise<string> {
  const { settings, client, ledger, from, nonce } = fill;
  const claim = await ledger.claimGap(nonce, nonce);
  if (!claim.record) return `waiting for nonce ${nonce}, held by another transfer of ${from}`;
  const sent = claim.record.txs.at(-1);
  if (sent) {
    // Signed before (this run or another): the same bytes again, in case the node dropped them; a refusal is harmless.
    await client.request({ method: "eth_sendRawTransaction", params: [sent.raw as Hex] }).catch(() => undefined);
    return `waiting for nonce ${nonce}, filled by the zero-value transaction ${sent.hash} to ${from} itself`;
  }
  const account = await fill.account();
  if ("reason" in account) return `nonce ${nonce} is missing and cannot be filled: ${account.reason}`;
  let maxFeePerGas: bigint;
  let maxPriorityFeePerGas: bigint;
  let native: bigint;
  try {
    const fees = await client.estimateFeesPerGas();
    maxFeePerGas = fees.maxFeePerGas * FILLER_FEE_MULTIPLIER;
    maxPriorityFeePerGas = fees.maxPriorityFeePerGas * FILLER_FEE_MULTIPLIER;
    native = await client.getBalance({ address: from });
  } catch (error) {
    return `nonce ${nonce} is missing, and the ${settings.chain} node cannot be asked right now (${safeRpcReason(error)})`;
  }
  if (native < SELF_TRANSFER_GAS * maxFeePerGas) {
    return `nonce ${nonce} is missing, and ${from} cannot pay the gas of a transaction to fill it (${SELF_TRANSFER_GAS * maxFeePerGas} wei; it holds ${native})`;
  }
  let raw: Hex;
  try {
    raw = await account.signTransaction({
      chainId: chainConfig(settings.chain).chainId!,
      type: "eip1559",
      to: from,
      value: 0n,
      nonce,
      gas: SELF_TRANSFER_GAS,
      maxFeePerGas,
      maxPriorityFeePerGas,
    });
  } catch {
    return `nonce ${nonce} is missing, and the transaction to fill it could not be signed`;
  }
  const hash = keccak256(raw);
  const tx = {
    hash,
    raw,
    gas: SELF_TRANSFER_GAS.toString(),
    maxFeePerGas: maxFeePerGas.toString(),
    maxPriorityFeePerGas: maxPriorityFeePerGas.toString(),
    sentAt: fill.now.toISOString(),
  };
  const reference = claim.record.reference;
  if (!(await ledger.addSigned(reference, tx))) return `waiting for nonce ${nonce}; its filler was voided before it was recorded`;
  try {
    await client.request({ method: "eth_sendRawTransaction", params: [raw] });
  } catch (error) {
    const outcome = broadcastOutcome(error);
    if (outcome.kind === "refused" && !outcome.nonceUsed) {
      await ledger.release(reference, hash, true);
      return `nonce ${nonce} is missing; the node refused the zero-value transaction to fill it (${outcome.reason})`;
    }
  }
  return `waiting for nonce ${nonce}, filled by the zero-value transaction ${hash} to ${from} itself`;
}
