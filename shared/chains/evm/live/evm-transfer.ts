import { type Address, encodeFunctionData, erc20Abi, getAddress, type Hex, isAddress, keccak256, type PublicClient } from "viem";
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { chainConfig } from "../../chain-config.ts";
import type { TransferRequest, TransferResult } from "../../chain-port.ts";
import type { LiveChainSettings } from "../../live/live-config.ts";
import type { SignerSource } from "../../live/signer-source.ts";
import { broadcastOutcome, safeRpcReason } from "./evm-broadcast-errors.ts";
import { type EvmFees, replacementFees } from "./evm-fees.ts";
import { fillNonceGap } from "./evm-gap-filler.ts";
import type { EvmSendRecord, EvmSenderLedger, EvmSenders } from "./evm-send-record.ts";
import { transferStatus } from "./evm-transfer-status.ts";

/** What one live EVM chain's transfers are made with. */
export type EvmTransferDeps = {
  settings: LiveChainSettings;
  /** A client whose RPC was checked to be this chain's. */
  client: () => Promise<PublicClient>;
  signers: SignerSource;
  senders: EvmSenders;
  /** A transaction not mined this long after it was sent is replaced with the same nonce and higher fees. */
  replaceAfterMs: number;
};

/** Gas headroom over the node's estimate (the balance it reads can change before the block); the unused part is never charged. */
const GAS_MARGIN = (gas: bigint) => (gas * 6n) / 5n;

const failure = (errorReason: string, txHash: string | null = null): TransferResult => ({ success: false, errorReason, txHash });

/** One reference's transfer on one chain from one sender: the context every step shares. */
type Send = {
  deps: EvmTransferDeps;
  client: PublicClient;
  ledger: EvmSenderLedger;
  input: TransferRequest;
  from: Address;
  data: Hex;
};

/**
 * Sends `input.amount` of the chain's token from `input.from` to `input.to`
 * as an ERC-20 `transfer`, signed with the tenant's installed signer, or
 * answers for the transaction already sent for `input.reference`: pending
 * until its receipt is deep enough, then success, or failure if it
 * reverted. A new attempt is only made when the reference has none, or its
 * last one spent its nonce without moving money. Nothing is signed when the
 * wallet cannot pay the transaction's max fee. A failure under a
 * reservation is final (`closeAfterFailure`).
 */
export async function sendEvmTransfer(deps: EvmTransferDeps, input: TransferRequest): Promise<TransferResult> {
  const { settings } = deps;
  if (input.chain !== settings.chain) return failure(`this adapter sends on ${settings.chain}, not ${input.chain}`);
  if (!isAddress(input.from, { strict: false }) || !isAddress(input.to, { strict: false })) return failure("the sender or the recipient is not an EVM address");
  const from = getAddress(input.from);
  const ledger = deps.senders.sender(settings.chain, from);
  const outcome = await transferFrom(deps, input, from, ledger);
  if (outcome.success !== false || input.reservation === undefined) return outcome;
  return closeAfterFailure(ledger, input.reference, input.reservation, outcome);
}

/**
 * A failure under a reservation closes the reference to it in the sender's
 * book first, so no call of that reservation (or an earlier one) can sign
 * afterwards: only then may the caller release the reservation and reserve
 * again, perhaps from another wallet, without a run still in flight (a loan
 * object reset mid-run, two objects owning the loan) sending as well. If
 * another call signed a transaction for the reference meanwhile, it may
 * still be mined: that is the answer (pending), and the reservation stays.
 */
async function closeAfterFailure(ledger: EvmSenderLedger, reference: string, reservation: number, failed: TransferResult): Promise<TransferResult> {
  const inFlight = await ledger.close(reference, reservation);
  return inFlight ? pending(inFlight, "another call signed a transaction for this reference while this one failed; that one is followed") : failed;
}

/** `sendEvmTransfer` past its checks of the chain and the addresses, from one sender's book. */
async function transferFrom(deps: EvmTransferDeps, input: TransferRequest, from: Address, ledger: EvmSenderLedger): Promise<TransferResult> {
  const { settings } = deps;
  if (input.amount <= 0n) return failure("the amount must be positive");
  const data = encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [getAddress(input.to), input.amount] });
  const existing = await ledger.get(input.reference);
  let client: PublicClient;
  try {
    client = await deps.client();
  } catch (error) {
    if (existing?.txs.length && !existing.failed) return pending(existing, `the ${settings.chain} node cannot be asked right now (${safeRpcReason(error)})`);
    return failure(`the ${settings.chain} node cannot be asked right now: ${safeRpcReason(error)}`);
  }
  const send: Send = { deps, client, ledger, input, from, data };
  if (existing && !existing.failed && existing.txs.length > 0) return follow(send, existing, true);
  if (input.followOnly) return failure(`no transfer from ${from} is in flight for this reference, and this sender may no longer send`);
  return firstAttempt(send);
}

const pending = (record: EvmSendRecord, detail: string): TransferResult => ({ success: "pending", txHash: record.txs.at(-1)!.hash, detail });

/** The tenant's signer for `from`, or why there is none. The key stays inside the account object and is never part of a message. */
async function signerFor(send: Send): Promise<{ account: PrivateKeyAccount } | { reason: string }> {
  const { settings, signers } = send.deps;
  if (!send.input.tenantId) return { reason: `no tenant is named for the transfer from ${send.from} on ${settings.chain}` };
  const key = await signers.privateKey({ tenantId: send.input.tenantId, chain: settings.chain, address: send.from });
  if (!key) return { reason: `no signer is installed for ${send.from} on ${settings.chain}: the platform operator installs it` };
  let account: PrivateKeyAccount;
  try {
    account = privateKeyToAccount(key as Hex);
  } catch {
    return { reason: `the signer installed for ${send.from} on ${settings.chain} is not a valid EVM key` };
  }
  if (account.address !== send.from) return { reason: `the signer installed for ${send.from} on ${settings.chain} signs for another address` };
  return { account };
}

async function firstAttempt(send: Send): Promise<TransferResult> {
  const { client, deps, from } = send;
  const { settings } = deps;
  const signer = await signerFor(send);
  if ("reason" in signer) return failure(signer.reason);
  let gas: bigint;
  let fees: EvmFees;
  let native: bigint;
  let pendingCount: number;
  try {
    gas = GAS_MARGIN(await client.estimateGas({ account: from, to: settings.tokenAddress as Address, data: send.data }));
  } catch (error) {
    // The node simulated the transfer and it would not succeed (a token balance too low, a paused token), or could not be asked.
    return failure(`the ${settings.chain} node would not run the transfer from ${from}: ${safeRpcReason(error)}`);
  }
  try {
    [fees, native, pendingCount] = await Promise.all([
      client.estimateFeesPerGas(),
      client.getBalance({ address: from }),
      client.getTransactionCount({ address: from, blockTag: "pending" }),
    ]);
  } catch (error) {
    return failure(`the ${settings.chain} node cannot be asked right now: ${safeRpcReason(error)}`);
  }
  const maxCost = gas * fees.maxFeePerGas;
  if (native < maxCost) {
    return failure(
      `the DISBURSEMENT wallet ${from} on ${settings.chain} cannot pay the transaction's max fee: it holds ${native} wei, the transfer may cost ${maxCost}`,
    );
  }
  const claim = await send.ledger.claim(send.input.reference, pendingCount, send.input.reservation);
  if (!claim.record)
    return failure(`the transfer from ${from} was closed to this reservation (it failed, or the loan released it): nothing is signed under it`);
  // Another call holds this reference's nonce: answer for its transaction (or sign alongside it with the same nonce, so only one can be mined).
  if (!claim.claimed && claim.record.txs.length > 0) return follow(send, claim.record, true);
  return signAndBroadcast(send, signer.account, claim.record, { gas, fees }, true);
}

/**
 * Signs the transfer with the record's nonce, records it, broadcasts it.
 * A refusal gives the transaction back (and the nonce with it when it was
 * the reference's only one); an unknown answer keeps it, to be sent again.
 */
async function signAndBroadcast(
  send: Send,
  account: PrivateKeyAccount,
  record: EvmSendRecord,
  { gas, fees }: { gas: bigint; fees: EvmFees },
  first: boolean,
): Promise<TransferResult> {
  const { settings } = send.deps;
  let raw: Hex;
  try {
    raw = await account.signTransaction({
      chainId: chainConfig(settings.chain).chainId!,
      type: "eip1559",
      to: settings.tokenAddress as Address,
      data: send.data,
      value: 0n,
      nonce: record.nonce,
      gas,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
  } catch {
    return first ? failure(`the transfer from ${send.from} on ${settings.chain} could not be signed`) : pending(record, "the replacement could not be signed");
  }
  const hash = keccak256(raw);
  const tx = {
    hash,
    raw,
    gas: gas.toString(),
    maxFeePerGas: fees.maxFeePerGas.toString(),
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas.toString(),
    sentAt: send.input.now.toISOString(),
  };
  const signed = await send.ledger.addSigned(send.input.reference, tx, send.input.reservation);
  // The nonce was voided meanwhile (the reservation closed, or the attempt failed): what was just signed is never broadcast.
  if (!signed) {
    if (first)
      return failure(`the transfer from ${send.from} was closed before it was recorded (the reservation was released meanwhile): nothing was broadcast`);
    return pending(record, "the replacement was not recorded (the attempt changed meanwhile) and is not broadcast; the transaction sent before is followed");
  }
  try {
    await send.client.request({ method: "eth_sendRawTransaction", params: [raw] });
  } catch (error) {
    const outcome = broadcastOutcome(error);
    // "Nonce too low" proves nothing about this transaction: it may be this very one, mined after an earlier send of
    // it whose answer was lost (viem retries a broadcast that timed out), or the same bytes another run sent. It is
    // kept, and the receipts decide (follow). Only a refusal that leaves the nonce unused gives the transaction back.
    if (outcome.kind === "refused" && !outcome.nonceUsed) {
      await send.ledger.release(send.input.reference, hash, true);
      if (first) return failure(`the ${settings.chain} node refused the transfer from ${send.from}: ${outcome.reason}`);
      return pending(record, `a replacement with higher fees was refused (${outcome.reason}); the transaction sent before still stands`);
    }
    if (outcome.kind === "unknown")
      return pending(signed, `the ${settings.chain} node's answer to the broadcast was lost (${outcome.reason}); the same transaction is sent again`);
  }
  return follow(send, signed, false);
}

/**
 * Where the reference's transaction stands. Any of its hashes (they share
 * one nonce) may be the one mined. Unmined: replaced with bumped fees once
 * the newest is older than `replaceAfterMs`, or sent again if the node has
 * forgotten it; failed if the nonce was used by a transaction of someone else.
 */
async function follow(send: Send, record: EvmSendRecord, mayReplace: boolean): Promise<TransferResult> {
  const { deps, client, input } = send;
  const status = await transferStatus(client, deps.settings, send.from, record).catch((error) => ({
    kind: "unreadable" as const,
    reason: safeRpcReason(error),
  }));
  switch (status.kind) {
    case "confirmed":
      return { success: true, txHash: status.hash, blockNumber: status.blockNumber, confirmedAt: status.confirmedAt };
    case "nonce-used": {
      // Seen once is not enough: a node behind a balancer may lack our receipt for a while. Failed (and so sent
      // again) only when a follow at least replaceAfterMs after the first sighting sees the same.
      const seen = await send.ledger.sawNonceUsed(input.reference, record.attempt, input.now.toISOString());
      const since = seen?.nonceUsedSeenAt ? Date.parse(seen.nonceUsedSeenAt) : input.now.getTime();
      if (input.now.getTime() - since < deps.replaceAfterMs) {
        return pending(record, `${status.reason}, as this node reads it; checked again before the attempt is given up`);
      }
      await send.ledger.fail(input.reference, status.reason, record.attempt);
      return failure(status.reason, null);
    }
    case "reverted": {
      await send.ledger.fail(input.reference, status.reason, record.attempt);
      return failure(status.reason, status.hash);
    }
    case "mined":
      return { success: "pending", txHash: status.hash, detail: status.detail };
    case "unreadable":
      return pending(record, `the ${deps.settings.chain} node cannot be asked right now (${status.reason})`);
    case "unmined":
      break;
  }
  const newest = record.txs.at(-1)!;
  const waited = mayReplace && input.now.getTime() - Date.parse(newest.sentAt) >= deps.replaceAfterMs;
  // Replaced only when no lower nonce is missing: one queued behind an unused nonce is stuck on that gap, not on its fees.
  if (waited && status.nextInLine) {
    const replaced = await replace(send, record);
    if (replaced) return replaced;
  }
  // Behind a gap: the missing nonce is filled when the book gave it back and nobody took it since.
  const gap =
    waited && status.pendingCount < record.nonce
      ? await fillNonceGap({
          settings: deps.settings,
          client,
          ledger: send.ledger,
          from: send.from,
          nonce: status.pendingCount,
          account: async () => {
            const signer = await signerFor(send);
            return "reason" in signer ? signer : signer.account;
          },
          now: input.now,
        })
      : null;
  if (!status.known) {
    // Dropped from the node's pool (a restart, an eviction): the same signed bytes again; a refusal is judged on the next call.
    await client.request({ method: "eth_sendRawTransaction", params: [newest.raw as Hex] }).catch(() => undefined);
  }
  return pending(record, `broadcast with nonce ${record.nonce}, not mined yet${gap ? `; ${gap}` : ""}`);
}

/** A replacement never bids more than this many times the chain's current max-fee estimate. */
const MAX_FEE_OVER_ESTIMATE = 3n;

/**
 * Replaces the reference's stuck transaction: the same nonce, both fees at
 * least 12.5% higher. Null (nothing done) when that would bid more than
 * MAX_FEE_OVER_ESTIMATE times what the chain asks now: then it is not stuck
 * on its fees (before, a transfer queued behind a nonce gap was bumped every
 * few minutes, 9× in 20 bumps, until the wallet could not pay for gas).
 */
async function replace(send: Send, record: EvmSendRecord): Promise<TransferResult | null> {
  const { client, deps, from } = send;
  const stuck = record.txs.at(-1)!;
  const signer = await signerFor(send);
  if ("reason" in signer) return pending(record, `not mined yet, and cannot be replaced: ${signer.reason}`);
  let fees: EvmFees;
  let native: bigint;
  try {
    const stuckFees = { maxFeePerGas: BigInt(stuck.maxFeePerGas), maxPriorityFeePerGas: BigInt(stuck.maxPriorityFeePerGas) };
    const current = await client.estimateFeesPerGas();
    fees = replacementFees(stuckFees, current);
    // Already bid far above what the chain asks: not stuck on its fees, and bumping again would only compound them.
    if (fees.maxFeePerGas > current.maxFeePerGas * MAX_FEE_OVER_ESTIMATE) return null;
    native = await client.getBalance({ address: from });
  } catch (error) {
    return pending(record, `not mined yet; the ${deps.settings.chain} node cannot be asked for a replacement (${safeRpcReason(error)})`);
  }
  const gas = BigInt(stuck.gas);
  if (native < gas * fees.maxFeePerGas) {
    return pending(record, `not mined yet, and the wallet cannot pay a replacement's max fee (${gas * fees.maxFeePerGas} wei; it holds ${native})`);
  }
  return signAndBroadcast(send, signer.account, record, { gas, fees }, false);
}
