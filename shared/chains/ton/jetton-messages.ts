import { type Address, beginCell, type Cell, type Slice } from "@ton/core";

/** TEP-74 operation codes the adapter and the listener read or write. */
export const JETTON_OP = {
  transfer: 0x0f8a7ea5,
  internalTransfer: 0x178d4519,
  transferNotification: 0x7362d09c,
  excesses: 0xd53276db,
} as const;

/**
 * The TEP-74 query_id of a reference (`funding:<loanId>`): the first 8 bytes
 * of its SHA-256, so every message of one funding carries the same id and the
 * adapter can follow it from the wallet through both jetton wallets.
 *
 * @example await queryIdOf("funding:5b0e1c0a-6f7d-4c1e-9a3b-2f1d0c9e8a7b") // 64-bit bigint
 */
export async function queryIdOf(reference: string): Promise<bigint> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(reference)));
  return digest.slice(0, 8).reduce((acc, byte) => (acc << 8n) | BigInt(byte), 0n);
}

/** A text comment as wallets write it: op 0, then the UTF-8 text (snake cells). */
export const textComment = (text: string): Cell => beginCell().storeUint(0, 32).storeStringTail(text).endCell();

/**
 * The body of a jetton `transfer` (TEP-74) sent to the sender's own jetton
 * wallet: `amount` base units to `destination`'s jetton wallet; the TON left
 * over comes back to `responseDestination`; `forwardTonAmount` nanoton and the
 * comment reach the destination in a `transfer_notification`.
 */
export function jettonTransferBody(input: {
  queryId: bigint;
  amount: bigint;
  destination: Address;
  responseDestination: Address;
  forwardTonAmount: bigint;
  comment: string | null;
}): Cell {
  return beginCell()
    .storeUint(JETTON_OP.transfer, 32)
    .storeUint(input.queryId, 64)
    .storeCoins(input.amount)
    .storeAddress(input.destination)
    .storeAddress(input.responseDestination)
    .storeBit(false) // no custom payload
    .storeCoins(input.forwardTonAmount)
    .storeMaybeRef(input.comment === null ? null : textComment(input.comment))
    .endCell();
}

/** op and query_id of a jetton message body, or null when the body is too short to hold them. */
export function jettonHeader(body: Cell): { op: number; queryId: bigint } | null {
  try {
    const s = body.beginParse();
    if (s.remainingBits < 96) return null;
    return { op: s.loadUint(32), queryId: s.loadUintBig(64) };
  } catch {
    return null;
  }
}

/** A `transfer_notification` a jetton wallet sends its owner on receipt, decoded. */
export type TransferNotification = { queryId: bigint; amount: bigint; sender: Address | null; comment: string | null };

/**
 * Decodes a `transfer_notification` body, or null when `body` is not one.
 * `comment` is the forward payload's text comment exactly as sent (op 0 and
 * its text), null when the payload is empty, binary or malformed.
 */
export function parseTransferNotification(body: Cell): TransferNotification | null {
  try {
    const s = body.beginParse();
    if (s.remainingBits < 32 || s.loadUint(32) !== JETTON_OP.transferNotification) return null;
    const queryId = s.loadUintBig(64);
    const amount = s.loadCoins();
    const sender = s.loadMaybeAddress();
    return { queryId, amount, sender, comment: forwardComment(s) };
  } catch {
    return null;
  }
}

/** The text comment in a forward payload (`Either Cell ^Cell`), or null. */
function forwardComment(s: Slice): string | null {
  try {
    if (s.remainingBits < 1) return null;
    const payload = s.loadBit() ? s.loadRef().beginParse() : s;
    if (payload.remainingBits < 32 || payload.loadUint(32) !== 0) return null;
    return payload.loadStringTail();
  } catch {
    return null;
  }
}

/** A plain message's text comment (op 0), or null. */
export function messageComment(body: Cell): string | null {
  try {
    const s = body.beginParse();
    if (s.remainingBits < 32 || s.loadUint(32) !== 0) return null;
    return s.loadStringTail();
  } catch {
    return null;
  }
}
