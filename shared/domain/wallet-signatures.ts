/**
 * Solana and TON wallet signatures over agreement challenges (DECISIONS.md
 * "Embed and widget", accept; the EVM case is in signatures.ts). Pure: ed25519
 * and SHA-256 through WebCrypto (Cloudflare Workers and Bun both implement
 * `Ed25519`), wallet addresses derived locally with @ton/ton, no RPC.
 *
 * Every input arrives straight from a browser, so nothing here throws: a
 * malformed value is a failed verification.
 */
import { Buffer } from "node:buffer";
import { Address } from "@ton/core";
// Deep imports: the @ton/ton index also loads its HTTP clients (axios), which
// the embed worker has no use for. The wallet modules depend on @ton/core only.
import { WalletContractV4 } from "@ton/ton/dist/wallets/v4/WalletContractV4";
import { WalletContractV5R1 } from "@ton/ton/dist/wallets/v5r1/WalletContractV5R1";
import { decodeBase58, tonAccountAddress } from "./addresses.ts";

// ---------------------------------------------------------------------------
// Solana
// ---------------------------------------------------------------------------

/**
 * True when `signature` is an ed25519 signature of the UTF-8 bytes of
 * `message` by the key whose base58 encoding is `address` (a Solana wallet
 * address is its public key). `signature` is 64 bytes as base58 or base64
 * (standard or URL-safe alphabet, padding optional); when a string reads as
 * both, both readings are tried. Anything else gives false, never a throw.
 *
 * @example await verifySolanaSignature({ address: "9xQe…", message, signature: "5VfY…" }) // true
 */
export async function verifySolanaSignature(input: { address: string; message: string; signature: string }): Promise<boolean> {
  try {
    const { address, message, signature } = input;
    if (typeof address !== "string" || typeof message !== "string" || typeof signature !== "string") return false;
    // 32 bytes take 32 (all zero) to 44 base58 characters; the bound also keeps decoding cheap.
    if (address.length < 32 || address.length > 44) return false;
    const publicKey = decodeBase58(address);
    if (!publicKey || publicKey.length !== 32) return false;

    const candidates: Uint8Array[] = [];
    // 64 bytes take 64 to 88 base58 characters, and 86 (unpadded) or 88 base64 characters.
    if (signature.length >= 64 && signature.length <= 88) {
      const fromBase58 = decodeBase58(signature);
      if (fromBase58 && fromBase58.length === 64) candidates.push(fromBase58);
      const fromBase64 = decodeBase64(signature);
      if (fromBase64 && fromBase64.length === 64 && !candidates.some((c) => sameBytes(c, fromBase64))) {
        candidates.push(fromBase64);
      }
    }
    const data = new TextEncoder().encode(message);
    for (const candidate of candidates) {
      if (await ed25519Verify(publicKey, candidate, data)) return true;
    }
    return false;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------
// TON Connect signData (text)
// ---------------------------------------------------------------------------

/** Seconds a `timestamp` may lie ahead of `nowSeconds` (the wallet's clock may run fast). */
export const TON_SIGN_DATA_MAX_FUTURE_SKEW_SECONDS = 60;
/** Default for `maxAgeSeconds`. */
export const TON_SIGN_DATA_DEFAULT_MAX_AGE_SECONDS = 900;

/** The reason of every failure of `verifyTonConnectSignData`, one per check, fixed strings. */
export const TON_SIGN_DATA_REASONS = {
  malformed: "the sign-data fields are missing or of the wrong type",
  badAddress: "address is not a valid TON address",
  badPublicKey: "publicKey must be a 32-byte ed25519 key in hex or base64",
  badSignature: "signature must be 64 bytes in base64",
  badTimestamp: "timestamp must be a whole, non-negative number of seconds",
  badDomain: "domain must be a non-empty host name",
  badClock: "nowSeconds and maxAgeSeconds must be finite numbers, maxAgeSeconds not negative",
  domainNotAllowed: "domain is not one of the allowed domains",
  timestampInFuture: "timestamp is more than 60 seconds in the future",
  timestampExpired: "timestamp is older than the allowed age",
  keyNotForAddress: "publicKey does not belong to address: no standard wallet (v4, v5r1) of that key has this address",
  signatureInvalid: "signature does not verify for publicKey over the sign-data message",
} as const;

export type TonSignDataResult = { ok: true } | { ok: false; reason: string };

/**
 * Verifies a TON Connect `signData` response for a `text` payload:
 *
 * 1. the fields are well formed: `address` friendly (EQ…/UQ…/kQ…/0Q…) or raw
 *    (`0:<hex>`, workchain 0 or -1); `publicKey` 32 bytes as hex (what TON
 *    Connect's `ton_addr` reply carries) or base64; `signature` 64 bytes as
 *    base64 (standard or URL-safe);
 * 2. `domain` is allowed (see below);
 * 3. `timestamp` is at most 60 s after `nowSeconds` and at most
 *    `maxAgeSeconds` (default 900) before it, both bounds inclusive;
 * 4. `publicKey` belongs to `address`: the address is that of a standard
 *    wallet contract for the key, default subwallet — WalletContractV4, or
 *    WalletContractV5R1 for network global id -239 (mainnet) or -3 (testnet).
 *    For workchain -1 the V5R1 wallet id is tried with its context workchain
 *    both -1 and 0 (`WalletContractV5R1.create` leaves it 0 unless told);
 * 5. `signature` is the ed25519 signature by `publicKey` of
 *    `tonConnectSignDataTextHash(address, domain, timestamp, text)`.
 *
 * Checks run in that order and the first failure is returned, with its own
 * reason from `TON_SIGN_DATA_REASONS`. Never throws.
 *
 * `text` must be the message the server issued (the agreement challenge), not
 * the payload the wallet echoes back, so the signature is checked against what
 * the borrower was asked to sign.
 *
 * Domains: the wallet reports the dApp's domain as the host of its TON
 * Connect manifest URL (`host[:port]`, no scheme, the port only when not the
 * scheme's default — what `new URL(manifestUrl).host` gives). Each entry of
 * `allowedDomains` is either an origin (`https://merchant.example`,
 * `http://127.0.0.1:5173`), reduced to its `host` the same way, or a bare
 * `host[:port]` used as is. Comparison ignores ASCII case; unparseable
 * entries (e.g. the origin `null`) match nothing. In the widget the dApp is
 * the iframe, so the widget's own origin (`{embed_url}`) belongs in the list.
 *
 * @example
 * await verifyTonConnectSignData({
 *   address: "UQ…", publicKey: "a1b2…", signature: "3q2+7w…==", timestamp: 1767225600,
 *   domain: "widget.svc-credit.example", text: challenge.message, nowSeconds: 1767225630,
 *   allowedDomains: ["https://widget.svc-credit.example"],
 * }) // { ok: true }
 */
export async function verifyTonConnectSignData(input: {
  address: string;
  publicKey: string;
  signature: string;
  timestamp: number;
  domain: string;
  text: string;
  nowSeconds: number;
  allowedDomains: readonly string[];
  maxAgeSeconds?: number;
}): Promise<TonSignDataResult> {
  const R = TON_SIGN_DATA_REASONS;
  const fail = (reason: string): TonSignDataResult => ({ ok: false, reason });
  try {
    const { address, publicKey, signature, timestamp, domain, text, nowSeconds, allowedDomains } = input;
    const maxAgeSeconds = input.maxAgeSeconds ?? TON_SIGN_DATA_DEFAULT_MAX_AGE_SECONDS;
    if (
      typeof address !== "string" ||
      typeof publicKey !== "string" ||
      typeof signature !== "string" ||
      typeof domain !== "string" ||
      typeof text !== "string" ||
      !Array.isArray(allowedDomains)
    ) {
      return fail(R.malformed);
    }

    // 1. Shapes.
    const account = parseTonAddress(address);
    if (!account) return fail(R.badAddress);
    const key = decodeTonPublicKey(publicKey);
    if (!key) return fail(R.badPublicKey);
    const sig = signature.length <= 90 ? decodeBase64(signature) : null;
    if (!sig || sig.length !== 64) return fail(R.badSignature);
    if (typeof timestamp !== "number" || !Number.isSafeInteger(timestamp) || timestamp < 0) return fail(R.badTimestamp);
    // 253 for the name, 6 for ":65535".
    if (domain.length === 0 || domain.length > 259) return fail(R.badDomain);
    if (typeof nowSeconds !== "number" || !Number.isFinite(nowSeconds)) return fail(R.badClock);
    if (typeof maxAgeSeconds !== "number" || !Number.isFinite(maxAgeSeconds) || maxAgeSeconds < 0) {
      return fail(R.badClock);
    }

    // 2. Domain.
    const wanted = domain.toLowerCase();
    if (!allowedDomains.some((entry) => allowedHost(entry) === wanted)) return fail(R.domainNotAllowed);

    // 3. Freshness.
    if (timestamp > nowSeconds + TON_SIGN_DATA_MAX_FUTURE_SKEW_SECONDS) return fail(R.timestampInFuture);
    if (nowSeconds - timestamp > maxAgeSeconds) return fail(R.timestampExpired);

    // 4. The key controls the address.
    if (!standardWalletAddresses(account.workChain, key).some((a) => a.equals(account))) {
      return fail(R.keyNotForAddress);
    }

    // 5. The signature.
    const hash = await signDataTextHash(account, domain, timestamp, text);
    if (!(await ed25519Verify(key, sig, hash))) return fail(R.signatureInvalid);
    return { ok: true };
  } catch {
    return fail(R.malformed);
  }
}

/**
 * The 32 bytes a TON Connect wallet signs (ed25519) for a `signData` request
 * with a `text` payload. Throws a TypeError when `address` is not a TON
 * address or `timestamp` not a non-negative safe integer; meant for tests and
 * for building fixtures, `verifyTonConnectSignData` never calls it with bad input.
 *
 * The layout, from the TON Connect spec (ton-blockchain/ton-connect,
 * requests-responses.md, "Sign Data" → "Signature", text/binary case):
 *
 *     message = 0xffff
 *            ++ utf8("ton-connect/sign-data/")
 *            ++ workchain            int32, big-endian (two's complement: -1 is ff ff ff ff)
 *            ++ address hash         32 bytes
 *            ++ domain length        uint32, big-endian, in UTF-8 bytes
 *            ++ utf8(domain)
 *            ++ timestamp            uint64, big-endian, unix seconds
 *            ++ utf8("txt")
 *            ++ payload length       uint32, big-endian, in UTF-8 bytes
 *            ++ utf8(text)
 *     signature = Ed25519Sign(privkey, sha256(message))
 *
 * The spec names the widths but states big-endian only for the address; the
 * byte order of the lengths and the timestamp is taken from the reference
 * implementation linked from it (mois-ilya/sign-data-reference, src/utils.ts
 * `createTextBinaryHash`: writeInt32BE, writeUInt32BE, writeBigUInt64BE),
 * which Tonkeeper's wallet code copies. Unlike `ton_proof`, whose lengths and
 * timestamp are little-endian and whose hash is hashed again with a
 * "ton-connect" prefix, the sign-data message is hashed once.
 */
export async function tonConnectSignDataTextHash(input: { address: string; domain: string; timestamp: number; text: string }): Promise<Uint8Array> {
  const account = parseTonAddress(input.address);
  if (!account) throw new TypeError("address is not a TON address");
  if (!Number.isSafeInteger(input.timestamp) || input.timestamp < 0) throw new TypeError("timestamp must be a non-negative integer");
  return signDataTextHash(account, input.domain, input.timestamp, input.text);
}

const SIGN_DATA_PREFIX = new TextEncoder().encode("ton-connect/sign-data/");
const TEXT_TAG = new TextEncoder().encode("txt");

async function signDataTextHash(account: Address, domain: string, timestamp: number, text: string): Promise<Uint8Array> {
  const encoder = new TextEncoder();
  const domainBytes = encoder.encode(domain);
  const textBytes = encoder.encode(text);
  const size = 2 + SIGN_DATA_PREFIX.length + 4 + 32 + 4 + domainBytes.length + 8 + TEXT_TAG.length + 4 + textBytes.length;
  const message = new Uint8Array(size);
  const view = new DataView(message.buffer);
  let at = 0;
  const put = (bytes: Uint8Array) => {
    message.set(bytes, at);
    at += bytes.length;
  };
  put(new Uint8Array([0xff, 0xff]));
  put(SIGN_DATA_PREFIX);
  view.setInt32(at, account.workChain, false);
  at += 4;
  put(account.hash);
  view.setUint32(at, domainBytes.length, false);
  at += 4;
  put(domainBytes);
  view.setBigUint64(at, BigInt(timestamp), false);
  at += 8;
  put(TEXT_TAG);
  view.setUint32(at, textBytes.length, false);
  at += 4;
  put(textBytes);
  return new Uint8Array(await crypto.subtle.digest("SHA-256", message));
}

/** Friendly or raw, workchain 0 or -1 (`tonAccountAddress`), else null. */
function parseTonAddress(input: string): Address | null {
  const canonical = tonAccountAddress(input);
  if (!canonical.ok) return null;
  try {
    return Address.parseRaw(canonical.address);
  } catch {
    return null;
  }
}

function decodeTonPublicKey(input: string): Uint8Array | null {
  if (/^(0x)?[0-9a-fA-F]{64}$/.test(input)) {
    const hex = input.replace(/^0x/, "");
    const out = new Uint8Array(32);
    for (let i = 0; i < 32; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
    return out;
  }
  if (input.length > 44) return null;
  const bytes = decodeBase64(input);
  return bytes && bytes.length === 32 ? bytes : null;
}

const V5R1_NETWORK_GLOBAL_IDS = [-239, -3];

/** Addresses of the standard wallets (v4, v5r1), default subwallet, that `publicKey` controls on `workchain` (also the signer check of shared/wallets/install-signer.ts). */
export function standardWalletAddresses(workchain: number, publicKey: Uint8Array): Address[] {
  const key = Buffer.from(publicKey);
  const out: Address[] = [WalletContractV4.create({ workchain, publicKey: key }).address];
  for (const networkGlobalId of V5R1_NETWORK_GLOBAL_IDS) {
    const contextWorkchains = workchain === 0 ? [0] : [workchain, 0];
    for (const contextWorkchain of contextWorkchains) {
      const wallet =
        contextWorkchain === workchain
          ? WalletContractV5R1.create({
              publicKey: key,
              walletId: { networkGlobalId, context: { walletVersion: "v5r1", workchain, subwalletNumber: 0 } },
            })
          : // What `create({ workchain, publicKey, walletId: { networkGlobalId } })` builds.
            new WalletContractV5R1(workchain, key, {
              networkGlobalId,
              context: { walletVersion: "v5r1", workchain: contextWorkchain, subwalletNumber: 0 },
            });
      out.push(wallet.address);
    }
  }
  return out;
}

/** `https://a.example:8443` → `a.example:8443`; `a.example` → `a.example`; lowercase; null when unusable. */
function allowedHost(entry: unknown): string | null {
  if (typeof entry !== "string") return null;
  const value = entry.trim().toLowerCase();
  if (value.length === 0) return null;
  if (!value.includes("://")) return value;
  try {
    const host = new URL(value).host;
    return host.length > 0 ? host : null;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------

async function ed25519Verify(publicKey: Uint8Array, signature: Uint8Array, data: Uint8Array): Promise<boolean> {
  try {
    const key = await crypto.subtle.importKey("raw", toArrayBuffer(publicKey), { name: "Ed25519" }, false, ["verify"]);
    return await crypto.subtle.verify("Ed25519", key, toArrayBuffer(signature), toArrayBuffer(data));
  } catch {
    // A key that is not a curve point, on runtimes that check at import.
    return false;
  }
}

function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return copy.buffer;
}

/**
 * Strict base64: the standard or the URL-safe alphabet (not both), padding
 * optional but correct when present, and canonical (unused trailing bits
 * zero), so one byte string has one accepted spelling per alphabet.
 */
function decodeBase64(input: string): Uint8Array | null {
  const match = /^([A-Za-z0-9+/_-]*)(={0,2})$/.exec(input);
  if (!match) return null;
  const body = match[1]!;
  const padding = match[2]!;
  if (/[+/]/.test(body) && /[-_]/.test(body)) return null;
  if (body.length % 4 === 1) return null;
  if (padding.length > 0 && (body.length + padding.length) % 4 !== 0) return null;
  const standard = body.replace(/-/g, "+").replace(/_/g, "/");
  let binary: string;
  try {
    binary = atob(standard + "=".repeat((4 - (standard.length % 4)) % 4));
  } catch {
    return null;
  }
  const bytes = Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
  let again = "";
  for (const b of bytes) again += String.fromCharCode(b);
  if (btoa(again).replace(/=+$/, "") !== standard) return null;
  return bytes;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}
