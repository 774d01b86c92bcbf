import { Address, beginCell, external, internal, SendMode, storeMessage } from "@ton/core";
import { type DatabaseEnv, tenantDatabase } from "../../../../db/databases.ts";
import { keyPairFromSeed } from "@ton/crypto";
import { createDb, type Db } from "../../../../db/create-db.ts";
import type { TonTransferRow } from "../../../../db/schema/ton.ts";
import type { ChainPort, TransferRequest, TransferResult } from "../../chain-port.ts";
import type { LiveChainEnv, LiveChainSettings } from "../../live/live-config.ts";
import type { SignerSource } from "../../live/signer-source.ts";
import { jettonTransferBody, queryIdOf } from "../jetton-messages.ts";
import { jettonBalance, jettonWalletOf } from "../jetton-reads.ts";
import { readSeqno, type TonNetwork } from "../ton-network.ts";
import { toncenterNetwork } from "./toncenter-network.ts";
import { type TraceProgress, traceJettonTransfer } from "./trace-jetton-transfer.ts";
import { claimAttempt, findTonTransfer, inFlightFrom, markTaken, saveTrace, settleAttempt, storedTrace, traceOf } from "./ton-transfer-store.ts";
import { v5r1WalletAt } from "./v5r1-wallet.ts";

/** What the TON adapter is built from: the TON settings, the sealed signers, and the worker's environment (its bindings). */
export type TonLivePortOptions = {
  settings: LiveChainSettings;
  signers: SignerSource;
  env: LiveChainEnv & Record<string, unknown>;
  /** Where sent transfers are remembered (ton_transfers); defaults to the worker's D1 binding `DB`. */
  db?: Db;
  /** Defaults to toncenter at `settings.rpcUrl`; the tests pass the emulator. */
  network?: TonNetwork;
  /** The chain's time, unix seconds (a signed message's validity is judged by it); defaults to the system clock. */
  chainNow?: () => number;
};

/** TON attached to the jetton transfer: pays both jetton wallets' gas and the recipient wallet's deployment; the rest returns as excesses. */
export const JETTON_TRANSFER_TON = 50_000_000n;
/** Nanoton forwarded to the borrower with the transfer notification, so their wallet shows the funding comment. */
export const FORWARD_TON = 1n;
/** What the wallet's own transaction may cost on top of the attached TON. */
export const WALLET_FEE_RESERVE = 10_000_000n;
/** How long a signed message stays valid; after it (and a grace for the chain's clock), it can never land. */
export const MESSAGE_TTL_SECONDS = 120;
const EXPIRY_GRACE_SECONDS = 60;

const fail = (errorReason: string, txHash: string | null = null): TransferResult => ({ success: false, errorReason, txHash });

const parse = (address: string): Address | null => {
  try {
    return Address.parse(address);
  } catch {
    return null;
  }
};

/** What one attempt sends: the stored row's or the caller's request. */
type Plan = { tenantId: string; reference: string; from: Address; to: Address; amount: bigint };

/**
 * The live TON adapter (issue 13 item 5) through @ton/ton:
 * - `transfer`: funding as a TEP-74 transfer of the USDT jetton
 *   (`settings.tokenAddress`, the master) from the tenant's DISBURSEMENT
 *   wallet (v5r1), signed here with its sealed seed. Each attempt is stored
 *   before it is broadcast (ton_transfers), so a repeat call for the same
 *   reference follows that message instead of signing another; one message in
 *   flight per wallet (its seqno). `pending` until the recipient's jetton
 *   wallet has credited the jettons, then `success`; a jetton wallet that
 *   refuses the transfer bounces it: `failure`, nothing moved, and the next
 *   call for the reference is a new attempt. A message that expired unseen is
 *   signed again with a fresh seqno (the old one can no longer land).
 * - `balances`: the USDT jetton balance and the nanoton balance.
 * - `readTransactions`: not by block on TON; the TON listener reads each
 *   COLLECTIONS wallet (shared/settlement/ton-listener.ts).
 */
export function tonLivePort(options: TonLivePortOptions): ChainPort {
  const { settings, signers } = options;
  const network = options.network ?? toncenterNetwork(settings);
  const chainNow = options.chainNow ?? (() => Math.floor(Date.now() / 1000));
  const dbBinding = "DB" in options.env ? tenantDatabase(options.env as unknown as DatabaseEnv) : undefined;
  const db = options.db ?? (dbBinding ? createDb(dbBinding) : null);
  const master = Address.parse(settings.tokenAddress);

  /** Signs and stores one attempt, then broadcasts it. Checks first what would make it fail for sure. */
  async function attempt(
    database: Db,
    plan: Plan,
    now: Date,
    replacing?: { status: "FAILED" | "SENT"; messageHash: string },
    retried = false,
  ): Promise<TransferResult> {
    const seed = await signers.privateKey({ tenantId: plan.tenantId, chain: "TON", address: plan.from.toRawString() });
    if (!seed) return fail(`no signer is installed for the TON wallet ${plan.from.toRawString()}`);
    const keys = keyPairFromSeed(Buffer.from(seed, "hex"));
    const wallet = v5r1WalletAt(plan.from, keys.publicKey);
    if (!wallet) return fail(`the installed signer does not control ${plan.from.toRawString()} as a wallet v5r1`);

    const account = await network.account(plan.from);
    const needed = JETTON_TRANSFER_TON + FORWARD_TON + WALLET_FEE_RESERVE;
    if (account.balance < needed) {
      return fail(`the wallet ${plan.from.toRawString()} holds ${account.balance} nanoton; a jetton transfer needs at least ${needed}`);
    }
    const jettonWallet = await jettonWalletOf(network, master, plan.from);
    const seqno = await readSeqno(network, plan.from);
    const queryId = await queryIdOf(plan.reference);
    const validUntil = chainNow() + MESSAGE_TTL_SECONDS;
    const body = wallet.createTransfer({
      seqno,
      secretKey: keys.secretKey,
      timeout: validUntil,
      sendMode: SendMode.PAY_GAS_SEPARATELY | SendMode.IGNORE_ERRORS,
      messages: [
        internal({
          to: jettonWallet,
          value: JETTON_TRANSFER_TON + FORWARD_TON,
          bounce: true,
          body: jettonTransferBody({
            queryId,
            amount: plan.amount,
            destination: plan.to,
            responseDestination: plan.from,
            forwardTonAmount: FORWARD_TON,
            comment: plan.reference,
          }),
        }),
      ],
    });
    // An undeployed wallet's first message carries its code.
    const init = account.state === "active" ? undefined : wallet.init;
    const message = beginCell()
      .store(storeMessage(external({ to: plan.from, init, body })))
      .endCell();
    const stored = {
      reference: plan.reference,
      tenantId: plan.tenantId,
      wallet: plan.from.toRawString(),
      jettonWallet: jettonWallet.toRawString(),
      toAddress: plan.to.toRawString(),
      amount: plan.amount,
      queryId: queryId.toString(),
      seqno,
      validUntil,
      messageHash: body.hash().toString("hex"),
    };
    const claim = await claimAttempt(database, stored, now, replacing);
    if (claim === "taken") {
      const row = await findTonTransfer(database, plan.reference);
      return row ? follow(database, row, now) : fail("the transfer record vanished; retry");
    }
    if (claim === "busy") {
      // Another message holds the wallet's seqno: settle it if it has landed, then try once more, claiming as this
      // call meant to. Never over a message another run of this reference claimed meanwhile (that claim then answers
      // "taken", and this call follows it): a message in flight is replaced only once it provably never landed.
      const blocking = await inFlightFrom(database, stored.wallet);
      if (blocking && !retried) {
        await follow(database, blocking, now);
        return attempt(database, plan, now, replacing, true);
      }
      return fail(`the wallet ${stored.wallet} has another transfer in flight; this one is sent once that one lands`);
    }
    try {
      await network.sendExternal(message);
    } catch {
      // Maybe it reached the network, maybe not: the attempt stays SENT and is followed (and re-signed once it has expired unseen).
      return { success: "pending", txHash: stored.messageHash, detail: "broadcast could not be confirmed; the message is followed until it lands or expires" };
    }
    const row = await findTonTransfer(database, plan.reference);
    return row ? follow(database, row, now) : { success: "pending", txHash: stored.messageHash, detail: "broadcast" };
  }

  /** Follows a stored attempt to its outcome on chain, recording it once known. */
  async function follow(database: Db, row: TonTransferRow, now: Date): Promise<TransferResult> {
    if (row.status === "CONFIRMED") {
      return { success: true, txHash: row.txHash!, blockNumber: Number(row.txLt), confirmedAt: row.confirmedAt ?? row.updatedAt, from: row.wallet };
    }
    if (row.status === "FAILED") return fail(row.errorReason ?? "the transfer failed", row.txHash);
    const chainTime = chainNow();
    const trace = await traceJettonTransfer(network, {
      wallet: Address.parseRaw(row.wallet),
      jettonWallet: Address.parseRaw(row.jettonWallet),
      messageHash: row.messageHash,
      sentAt: row.validUntil - MESSAGE_TTL_SECONDS,
      now: chainTime,
      progress: traceOf(row),
    });
    /** Keeps how far this trace got, for the next one to go on from (written only when it changed). */
    const keep = async (progress: TraceProgress | null) => {
      const stored = storedTrace(progress);
      if (stored !== row.trace) await saveTrace(database, row, stored, now);
    };
    switch (trace.state) {
      case "delivered": {
        const confirmedAt = new Date(trace.at * 1000);
        await settleAttempt(database, row, { status: "CONFIRMED", txHash: trace.txHash, txLt: trace.lt, confirmedAt }, now);
        // TON has no per-account block number: the recipient's transaction's logical time stands for it.
        return { success: true, txHash: trace.txHash, blockNumber: Number(trace.lt), confirmedAt, from: row.wallet };
      }
      case "failed":
        await settleAttempt(database, row, { status: "FAILED", txHash: trace.txHash, errorReason: trace.reason }, now);
        return fail(trace.reason, trace.txHash);
      case "in-flight":
        // The wallet took it: its seqno is used, so the wallet may send the next reference's transfer meanwhile.
        if (row.status === "SENT") await markTaken(database, row, trace.txHash, storedTrace(trace.progress), now);
        else await keep(trace.progress);
        return { success: "pending", txHash: trace.txHash, detail: "the jetton transfer is on its way between jetton wallets" };
      case "unknown":
      case "not-found": {
        await keep(trace.state === "unknown" ? trace.progress : null);
        // Taken by the wallet before (a row from before traces kept their progress): never signed again.
        if (row.status === "TAKEN") {
          return { success: "pending", txHash: row.txHash ?? row.messageHash, detail: "the wallet took the message; the jettons are on their way" };
        }
        if (chainTime <= row.validUntil + EXPIRY_GRACE_SECONDS) {
          return { success: "pending", txHash: row.messageHash, detail: "broadcast; the wallet has not taken the message yet" };
        }
        // Expired: the wallet refuses it from now on. Signed again only if it provably never landed: the wallet's
        // history from the send to after the expiry was read in full without it (a search walks back over several
        // traces; one that read the newest transaction before the expiry proves nothing, and the next starts anew),
        // or the wallet's seqno is still the message's (a wallet takes each seqno once). Otherwise (anyone can bury
        // the wallet's transaction under hundreds of others) the attempt stays in flight and the next trace goes on:
        // never a second transfer for one reference.
        const provedUnseen = trace.state === "not-found" && trace.readTo > row.validUntil + EXPIRY_GRACE_SECONDS;
        if (!provedUnseen && (await readSeqno(network, Address.parseRaw(row.wallet))) !== row.seqno) {
          return {
            success: "pending",
            txHash: row.messageHash,
            detail: "the wallet has used this message's seqno, and its history since the send is not read in full yet; not signed again",
          };
        }
        const plan = {
          tenantId: row.tenantId,
          reference: row.reference,
          from: Address.parseRaw(row.wallet),
          to: Address.parseRaw(row.toAddress),
          amount: row.amount,
        };
        const again = await attempt(database, plan, now, { status: "SENT", messageHash: row.messageHash });
        // Not re-signed (no signer any more, too little TON): the expired message is dead, so the attempt failed and frees the wallet.
        if (again.success === false) await settleAttempt(database, row, { status: "FAILED", txHash: null, errorReason: again.errorReason }, now);
        return again;
      }
    }
  }

  return {
    async transfer(input: TransferRequest) {
      if (input.chain !== settings.chain) return fail(`this adapter sends on ${settings.chain}, not ${input.chain}`);
      if (input.asset !== "USDT") return fail(`${settings.chain} funds in USDT, not ${input.asset}`);
      if (input.amount <= 0n) return fail("the amount must be positive");
      if (!input.tenantId) return fail("a live transfer names the tenant whose signer signs");
      if (!db) return fail("the TON adapter has no database to remember its transfers");
      const from = parse(input.from);
      const to = parse(input.to);
      if (!from || !to) return fail(`not a TON address: ${!from ? input.from : input.to}`);
      const existing = await findTonTransfer(db, input.reference);
      if (existing && existing.tenantId !== input.tenantId) return fail("this reference belongs to another tenant's transfer");
      if (existing && existing.status !== "FAILED") return follow(db, existing, input.now);
      if (input.followOnly) return fail("no transfer is in flight for this reference, and this sender may no longer send");
      // A new reference, or a new attempt after a failure (nothing moved under the last one).
      const plan = { tenantId: input.tenantId, reference: input.reference, from, to, amount: input.amount };
      return attempt(db, plan, input.now, existing ? { status: "FAILED", messageHash: existing.messageHash } : undefined);
    },
    readTransactions: async () => {
      throw new RangeError(`${settings.chain} is read per COLLECTIONS wallet by the TON listener (shared/settlement/ton-listener.ts), not by block`);
    },
    async balances(chain, address) {
      if (chain !== settings.chain) return null;
      const owner = parse(address);
      if (!owner) return null;
      const [stablecoin, account] = await Promise.all([jettonWalletOf(network, master, owner).then((w) => jettonBalance(network, w)), network.account(owner)]);
      return { stablecoin, native: account.balance };
    },
  };
}
