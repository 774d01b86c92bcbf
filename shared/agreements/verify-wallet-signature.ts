import type { ContractSignatureVerifier } from "../chains/chain-port.ts";
import { chainConfig } from "../chains/chain-config.ts";
import type { Chain } from "../domain/rails.ts";
import { TON_SIGN_DATA_REASONS, verifySolanaSignature, verifyTonConnectSignData } from "../domain/wallet-signatures.ts";
import { verifyEvmAgreementSignature } from "./evm-agreement-signature.ts";

/** What a TON Connect `signData` reply carries besides the signature. */
export type TonSignDataFields = { publicKey: string; timestamp: number; domain: string };

export type WalletSignatureInput = {
  chain: Chain;
  /** The wallet the message was issued to (canonical for its chain). */
  address: string;
  /** The exact text the wallet was asked to sign (the server's, never the client's echo). */
  message: string;
  signature: string;
  /** TON only: required there, ignored elsewhere. Partial so a caller can pass a request body's optional fields as they came. */
  ton?: Partial<TonSignDataFields> | null;
  /** TON only: the domains (`host[:port]`, or origins reduced to their host) a signature may name. */
  allowedDomains?: readonly string[];
  /**
   * The real time, not a tenant's sandbox clock: a TON signature's
   * `timestamp` comes from the wallet's own clock, so its freshness is
   * judged against the real one even when the sandbox clock was advanced.
   */
  now: Date;
};

/** The fields a failure can name; `reason` is the 400 message, `"<field>: …"`. */
export type WalletSignatureField = "walletSignature" | "publicKey" | "timestamp" | "domain";
export type WalletSignatureResult = { ok: true } | { ok: false; field: WalletSignatureField; reason: string };

/**
 * Where an EVM smart-contract wallet's signature can be checked (ERC-1271,
 * ERC-6492): the chain port, when it can call the chain. Absent or without
 * the capability (the simulated chains): EOAs only.
 */
export type WalletSignatureDeps = { contracts?: ContractSignatureVerifier | null };

const fail = (field: WalletSignatureField, text: string): WalletSignatureResult => ({ ok: false, field, reason: `${field}: ${text}` });

/** Each reason of `verifyTonConnectSignData`, as the field it is about and the text a caller reads. */
const TON_FAILURES: Record<keyof typeof TON_SIGN_DATA_REASONS, [WalletSignatureField, string]> = {
  malformed: ["walletSignature", "the TON Connect sign-data fields are missing or of the wrong type"],
  badAddress: ["walletSignature", "the wallet address is not a TON address"],
  badPublicKey: ["publicKey", "must be a 32-byte ed25519 key in hex or base64"],
  badSignature: ["walletSignature", "must be a 64-byte ed25519 signature in base64"],
  badTimestamp: ["timestamp", "must be a whole, non-negative number of seconds"],
  badDomain: ["domain", "must be a non-empty host name"],
  badClock: ["timestamp", "cannot be checked against the clock"],
  domainNotAllowed: ["domain", "is not an allowed TON Connect domain (the widget host, or the host of a widget program's allowed origin)"],
  timestampInFuture: ["timestamp", "is more than 60 seconds in the future"],
  timestampExpired: ["timestamp", "is too old: a TON Connect signature is accepted for 15 minutes"],
  keyNotForAddress: ["publicKey", "does not belong to the wallet address (no standard v4 or v5r1 wallet of this key has it)"],
  signatureInvalid: ["walletSignature", "is not the wallet's TON Connect signData signature of the challenge message"],
};
const TON_FAILURE_BY_REASON = new Map(
  (Object.keys(TON_FAILURES) as (keyof typeof TON_SIGN_DATA_REASONS)[]).map((k) => [TON_SIGN_DATA_REASONS[k] as string, TON_FAILURES[k]]),
);

/**
 * The one check that a wallet signed a message, for every chain family
 * (DECISIONS.md "Embed and widget", accept; SPEC.md "Loan-level KYC
 * confirmation and agreement"), used by the API agreement, the widget accept
 * and anything else that needs a wallet's word:
 *
 * - EVM: an EOA's EIP-191 `personal_sign`, else a smart-contract wallet's
 *   (ERC-1271 deployed, ERC-6492 counterfactual) through `deps.contracts`.
 *   When that chain cannot be reached it throws 503 with Retry-After (a
 *   caller has consumed nothing yet: the borrower retries), never "invalid".
 * - Solana: an ed25519 signature of the message's UTF-8 bytes by the address
 *   (its public key), base58 or base64.
 * - TON: a TON Connect `signData` text signature: `ton.publicKey` must be
 *   the key of the address (standard v4 or v5r1 wallet), `ton.domain` among
 *   `allowedDomains`, `ton.timestamp` at most 15 minutes old and 60 seconds
 *   ahead of `now`.
 *
 * Returns a value, never throws for a bad signature: `{ ok: false, field,
 * reason }` with `reason` ready for a 400 (`"publicKey: is required …"`).
 *
 * @example
 * const result = await verifyWalletSignature({ contracts: deps.chain }, { chain: "TON_TESTNET", address, message, signature, ton: { publicKey, timestamp, domain }, allowedDomains: ["embed.svc-credit.example"], now: clock.now() });
 * if (!result.ok) throw validationError([result.reason]);
 */
export async function verifyWalletSignature(deps: WalletSignatureDeps, input: WalletSignatureInput): Promise<WalletSignatureResult> {
  const family = chainConfig(input.chain).family;
  if (family === "EVM") {
    const ok = await verifyEvmAgreementSignature(deps.contracts, input.chain, { address: input.address, message: input.message, signature: input.signature });
    return ok ? { ok: true } : fail("walletSignature", "is not the wallet's EIP-191 signature of the challenge message");
  }
  if (family === "SOLANA") {
    const ok = await verifySolanaSignature({ address: input.address, message: input.message, signature: input.signature });
    return ok ? { ok: true } : fail("walletSignature", "is not the wallet's ed25519 signature of the challenge message");
  }
  const ton = input.ton ?? {};
  if (ton.publicKey === undefined) return fail("publicKey", "is required for a TON Connect signature (with timestamp and domain)");
  if (ton.timestamp === undefined) return fail("timestamp", "is required for a TON Connect signature (with publicKey and domain)");
  if (ton.domain === undefined) return fail("domain", "is required for a TON Connect signature (with publicKey and timestamp)");
  const result = await verifyTonConnectSignData({
    address: input.address,
    publicKey: ton.publicKey,
    signature: input.signature,
    timestamp: ton.timestamp,
    domain: ton.domain,
    text: input.message,
    nowSeconds: Math.floor(input.now.getTime() / 1000),
    allowedDomains: input.allowedDomains ?? [],
  });
  if (result.ok) return result;
  const [field, text] = TON_FAILURE_BY_REASON.get(result.reason) ?? ["walletSignature", result.reason];
  return fail(field, text);
}
