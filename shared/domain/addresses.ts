/**
 * Borrower wallet addresses per chain (DECISIONS.md "Chains", address
 * validation). Every address is stored and compared in one canonical form per
 * chain, so the same wallet typed two ways is one wallet (blocked-wallet lists,
 * credit lines per wallet, settlement matching).
 */
import { Address } from "@ton/core";
import { getAddress } from "viem";
import type { Chain } from "./rails.ts";

/**
 * `reason` is a sentence fragment meant to follow the field's name
 * ("borrowerWalletAddress must be …"), so validation messages name the field.
 */
export type AddressResult = { ok: true; address: string } | { ok: false; reason: string };

const fail = (reason: string): AddressResult => ({ ok: false, reason });

/**
 * Validates `input` as a wallet address on `chain` and returns its canonical form:
 * - EVM: the EIP-55 checksummed address.
 * - TON: the raw `workchain:hex` form in lowercase, so EQ…, UQ… and raw forms of one account are equal.
 * - Solana: the base58 string (base58 is one-to-one with byte strings).
 *
 * @example canonicalAddress("BASE", "0xd8da6bf26964af9d7eed9e03e53415d37aa96045")
 * // { ok: true, address: "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045" }
 * @example canonicalAddress("TON", "UQ…") // { ok: true, address: "0:…" }
 */
export function canonicalAddress(chain: Chain, input: string): AddressResult {
  switch (chain) {
    case "POLYGON_AMOY":
    case "BASE_SEPOLIA":
    case "POLYGON":
    case "BASE":
      return canonicalEvmAddress(input);
    case "TON":
    case "TON_TESTNET":
      return canonicalTonAddress(input);
    case "SOLANA_DEVNET":
      return canonicalSolanaAddress(input);
    default: {
      const unknown: never = chain;
      return fail(`cannot be checked: unknown chain ${String(unknown)}`);
    }
  }
}

const EVM_SHAPE = /^0x[0-9a-fA-F]{40}$/;

function canonicalEvmAddress(input: string): AddressResult {
  if (!EVM_SHAPE.test(input)) return fail("must be a 0x-prefixed 40-hex-digit address");
  const body = input.slice(2);
  const checksummed = getAddress(input);
  // EIP-55: a single-case body carries no checksum; mixed case is a checksum
  // and must match, since a typo there is exactly what it exists to catch.
  const singleCase = body === body.toLowerCase() || body === body.toUpperCase();
  if (!singleCase && checksummed !== input) return fail("fails its EIP-55 checksum");
  return { ok: true, address: checksummed };
}

const TON_RAW = /^(-?\d+):([0-9a-fA-F]*)$/;
/**
 * An address a loan or a wallet may name: basechain only. SPEC.md takes raw
 * addresses "prefix `0:`" (DECISIONS.md: raw `0:<64 hex>`), so a masterchain
 * (-1) account is refused. A TON Connect signature (wallet-signatures.ts)
 * may still come from either (`tonAccountAddress`).
 */
const TON_WORKCHAINS: readonly number[] = [0];

/**
 * Testnet-only friendly forms (kQ…, 0Q…) are accepted on both TON chains, and
 * so are mainnet forms on TON_TESTNET: the flag only tells a wallet which
 * network the user meant, the account id is the same on both, and wallets are
 * inconsistent about setting it. The canonical raw form drops the flag anyway.
 */
function canonicalTonAddress(input: string, workchains: readonly number[] = TON_WORKCHAINS): AddressResult {
  const raw = TON_RAW.exec(input);
  if (raw) {
    const [, wc, hex] = raw;
    if (!workchains.map(String).includes(wc!)) return fail("must be on TON workchain 0");
    if (hex!.length !== 64) return fail("must be a raw TON address of the form 0:<64 hex digits>");
    return { ok: true, address: `${wc}:${hex!.toLowerCase()}` };
  }
  if (input.length !== 48 || !/^[A-Za-z0-9+/_-]+$/.test(input)) {
    return fail("is not a valid TON address: expected a 48-character EQ…/UQ… address or raw 0:<64 hex digits>");
  }
  // A string with both alphabets is neither base64 nor base64url; no wallet writes one.
  if (/[+/]/.test(input) && /[-_]/.test(input)) return fail("is not a valid TON address: it mixes base64 and base64url");
  let parsed: ReturnType<typeof Address.parseFriendly>;
  try {
    parsed = Address.parseFriendly(input);
  } catch {
    // @ton/core throws (sometimes a bare string) for a bad CRC16 or an unknown tag byte.
    return fail("is not a valid TON address: its checksum or tag is wrong");
  }
  if (!workchains.includes(parsed.address.workChain)) return fail("must be on TON workchain 0");
  return { ok: true, address: parsed.address.toRawString() };
}

/** A TON account in raw form, on the basechain or the masterchain (a wallet that signs, not an address a loan names), by the rules above. */
export const tonAccountAddress = (input: string): AddressResult => canonicalTonAddress(input, [0, -1]);

function canonicalSolanaAddress(input: string): AddressResult {
  // 32 bytes take 32 (all zero) to 44 base58 characters; the bound also keeps decoding cheap.
  if (input.length < 32 || input.length > 44) return fail("must be a base58 Solana address of 32 to 44 characters");
  const bytes = decodeBase58(input);
  if (!bytes) return fail("must be base58 (digits and letters except 0, O, I and l)");
  if (bytes.length !== 32) return fail("must be base58 that decodes to 32 bytes");
  return { ok: true, address: encodeBase58(bytes) };
}

const BASE58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/**
 * Bitcoin-alphabet base58 (Solana keys and signatures). Returns null on any
 * character outside the alphabet. Written here rather than imported because
 * the decoders in node_modules are only transitive dependencies.
 *
 * @example decodeBase58("11") // Uint8Array [0, 0]
 */
export function decodeBase58(input: string): Uint8Array | null {
  let n = 0n;
  for (const ch of input) {
    const digit = BASE58_ALPHABET.indexOf(ch);
    if (digit < 0) return null;
    n = n * 58n + BigInt(digit);
  }
  // Each leading "1" (digit zero) stands for one leading zero byte.
  let zeros = 0;
  while (zeros < input.length && input[zeros] === "1") zeros++;
  const body: number[] = [];
  for (; n > 0n; n >>= 8n) body.push(Number(n & 0xffn));
  const out = new Uint8Array(zeros + body.length);
  out.set(body.reverse(), zeros);
  return out;
}

/** The inverse of `decodeBase58`. @example encodeBase58(new Uint8Array(32)) // "1" × 32 */
export function encodeBase58(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let body = "";
  for (; n > 0n; n /= 58n) body = BASE58_ALPHABET[Number(n % 58n)] + body;
  return "1".repeat(zeros) + body;
}
