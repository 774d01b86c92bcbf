import { BaseError, InvalidInputRpcError, InvalidParamsRpcError, TransactionRejectedRpcError } from "viem";

/**
 * What a failed `eth_sendRawTransaction` means for the nonce. Only a node's
 * own JSON-RPC refusal of the transaction is `refused` (it will never be
 * mined, so its nonce may be reused): invalid input (-32000), invalid params
 * (-32602), transaction rejected (-32003). Everything else (a timeout, an
 * HTTP error, a rate limit, an internal error) is `unknown`: the node may
 * have taken it, so the nonce stays with the reference and the same signed
 * bytes are sent again later. Calling a refusal unknown only delays; calling
 * an accepted transaction refused could pay a loan twice.
 */
export type BroadcastOutcome = { kind: "accepted" } | { kind: "refused"; nonceUsed: boolean; reason: string } | { kind: "unknown"; reason: string };

const REFUSAL_CODES = new Set<number>([InvalidInputRpcError.code, InvalidParamsRpcError.code, TransactionRejectedRpcError.code]);

/** How the node answered a broadcast that threw. */
export function broadcastOutcome(error: unknown): BroadcastOutcome {
  const reason = safeRpcReason(error);
  const code = rpcCode(error);
  const text = reason.toLowerCase();
  // The node already holds exactly this transaction: it was broadcast.
  if (text.includes("already known") || text.includes("known transaction") || text.includes("already imported")) return { kind: "accepted" };
  if (code === undefined || !REFUSAL_CODES.has(code)) return { kind: "unknown", reason };
  return { kind: "refused", nonceUsed: text.includes("nonce too low") || text.includes("nonce has already been used"), reason };
}

function rpcCode(error: unknown): number | undefined {
  if (error instanceof BaseError) {
    const found = error.walk((e) => typeof (e as { code?: unknown }).code === "number") as { code?: number } | null;
    return found?.code;
  }
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "number" ? code : undefined;
}

/** The RPC configured for a chain answers as another chain: nothing is signed or read through it. */
export class WrongChainError extends Error {}

/**
 * Text a node wrote, without what may be a provider's key: any URL, and any
 * run of 16 or more letters and digits mixed (not 0x-hex: addresses and
 * hashes stay). A provider can echo the request's URL, whose path or query
 * holds its key, in an error page or a JSON-RPC message ("key … over quota"),
 * and the reason travels to events, webhooks, e-mails and logs (an audit).
 */
export const redactNodeText = (text: string): string =>
  text
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s<>"']+/gi, "<url>")
    .replace(/\b(?!0x)(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{16,}/g, "<redacted>");

/**
 * A node's reason without the request: viem's messages carry the request
 * body and the RPC URL (which may hold a provider API key), so only the
 * node's own words (`details`) or the short message are kept, redacted.
 */
export function safeRpcReason(error: unknown): string {
  if (error instanceof BaseError) return redactNodeText(error.details || error.shortMessage).slice(0, 300);
  if (error instanceof WrongChainError) return error.message;
  return "the node could not be asked";
}
