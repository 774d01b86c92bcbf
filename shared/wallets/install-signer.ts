import { Address } from "@ton/core";
import { getAddress, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { operatorAudit } from "../../db/schema/go-live.ts";
import { signers } from "../../db/schema/wallets.ts";
import { sealSecret } from "../crypto/secret-box.ts";
import { canonicalAddress } from "../domain/addresses.ts";
import { notFound, validationError } from "../domain/errors.ts";
import { newId } from "../domain/ids.ts";
import { standardWalletAddresses } from "../domain/wallet-signatures.ts";
import { v5r1WalletAt } from "../chains/ton/live/v5r1-wallet.ts";
import { isLiveWalletChain, LIVE_WALLET_CHAINS } from "../domain/wallets.ts";
import type { Logger } from "../observability/logger.ts";
import type { Chain } from "../domain/rails.ts";
import { tenants } from "../../db/schema/tenants.ts";
import { eq } from "drizzle-orm";
import type { VerbDeps } from "../verbs.ts";

export type InstallSignerDeps = Pick<VerbDeps, "db"> & {
  /** AES-256-GCM key material for secrets at rest (the worker secret SECRETS_KEY). */
  secretsKey: string;
  log?: Logger;
};

export type InstallSignerInput = { tenantId: string; chain: string; address: string; privateKey: string; now: Date; actor?: string };

/** What installing answers: never the key, sealed or not. */
export type InstalledSigner = { id: string; chain: Chain; address: string };

/** None of these messages may quote the key: they end up in responses. */
const KEY_DOES_NOT_DERIVE = "privateKey: does not derive address (the key must control the wallet it signs for)";

/**
 * The operator installs a tenant's signing key server-side (DECISIONS.md
 * "Live wallets"): 400 unless the key derives `address` on `chain`, then
 * sealed with AES-256-GCM under SECRETS_KEY and stored, one per (tenant,
 * chain, address); installing again replaces the sealed key (rotation). The
 * key is never returned, logged or put in an error: the log line and the
 * answer carry the signer's id, chain and address only.
 *
 * - EVM (POLYGON, BASE): a 32-byte secp256k1 key, hex with or without 0x;
 *   `privateKeyToAccount(key).address` must be the address.
 * - TON: a 32-byte ed25519 seed or a 64-byte secret key (seed and public
 *   key, as @ton/crypto writes it; its halves must agree), hex or base64;
 *   the standard v5r1 wallet of the key must have the address (funding signs
 *   as v5r1; the key's v4 wallet is refused, 400, as it could not send).
 */
export async function installSigner(deps: InstallSignerDeps, input: InstallSignerInput): Promise<InstalledSigner> {
  // An unknown tenant is 404 whatever the body says.
  const [tenant] = await deps.db.select({ id: tenants.id }).from(tenants).where(eq(tenants.id, input.tenantId)).limit(1);
  if (!tenant) throw notFound("Tenant");
  if (!isLiveWalletChain(input.chain)) throw validationError([`chain: must be a live chain (${LIVE_WALLET_CHAINS.join(", ")})`]);
  const chain = input.chain;
  const canonical = canonicalAddress(chain, input.address);
  if (!canonical.ok) throw validationError([`address ${canonical.reason}`]);
  const address = canonical.address;

  const normalizedKey = chain === "TON" ? await tonKeyFor(address, input.privateKey) : evmKeyFor(address, input.privateKey);

  const sealedKey = await sealSecret(normalizedKey, deps.secretsKey);
  // The signer and the operator's audit entry (which the tenant reads in GET /v1/go-live) in one batch.
  const [[row]] = await deps.db.batch([
    deps.db
      .insert(signers)
      .values({ id: newId(), tenantId: input.tenantId, chain, address, sealedKey, createdAt: input.now, updatedAt: input.now })
      .onConflictDoUpdate({ target: [signers.tenantId, signers.chain, signers.address], set: { sealedKey, updatedAt: input.now } })
      .returning({ id: signers.id, chain: signers.chain, address: signers.address }),
    deps.db.insert(operatorAudit).values({
      id: newId(),
      tenantId: input.tenantId,
      actor: input.actor ?? "operator",
      action: "SIGNER_INSTALLED",
      decision: `${chain} ${address}`,
      note: null,
      createdAt: input.now,
    }),
  ]);
  deps.log?.info("signer installed", { tenantId: input.tenantId, signerId: row!.id, chain, address });
  return { id: row!.id, chain: row!.chain, address: row!.address };
}

/** The key as 0x-hex when it derives `address` on EVM; 400 otherwise. */
function evmKeyFor(address: string, input: string): Hex {
  const hex = input.trim().replace(/^0x/i, "");
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw validationError(["privateKey: must be a 32-byte secp256k1 key in hex (64 hex digits, 0x optional)"]);
  const key = `0x${hex.toLowerCase()}` as Hex;
  let derived: string;
  try {
    derived = privateKeyToAccount(key).address;
  } catch {
    // Zero or not under the curve order: viem refuses it (its error may quote the key, so it is dropped).
    throw validationError(["privateKey: is not a valid secp256k1 key"]);
  }
  if (getAddress(derived) !== address) throw validationError([KEY_DOES_NOT_DERIVE]);
  return key;
}

/** The 32-byte seed as hex when its standard wallet is `address` on TON; 400 otherwise. */
async function tonKeyFor(address: string, input: string): Promise<string> {
  const bytes = decodeKeyBytes(input.trim());
  if (!bytes || (bytes.length !== 32 && bytes.length !== 64)) {
    throw validationError(["privateKey: must be a 32-byte ed25519 seed or a 64-byte ed25519 secret key, in hex or base64"]);
  }
  const seed = bytes.slice(0, 32);
  const publicKey = await ed25519PublicKey(seed);
  // A 64-byte secret key carries its public key; one that disagrees with its seed would sign as another key.
  if (bytes.length === 64 && !sameBytes(bytes.slice(32), publicKey)) throw validationError(["privateKey: its public half does not match its seed"]);
  const account = Address.parseRaw(address);
  if (!standardWalletAddresses(account.workChain, publicKey).some((a) => a.equals(account))) throw validationError([KEY_DOES_NOT_DERIVE]);
  // Funding signs as a wallet v5r1 (shared/chains/ton/live): a v4 wallet of the key would fail every transfer, so it is refused here.
  if (!v5r1WalletAt(account, Buffer.from(publicKey))) {
    throw validationError(["privateKey: its wallet at address is a wallet v4; funding signs as a wallet v5r1, so use a v5r1 DISBURSEMENT wallet"]);
  }
  return toHex(seed);
}

/** The ed25519 public key of a 32-byte seed, through WebCrypto (workerd and Bun alike): PKCS#8 in, JWK `x` out. */
async function ed25519PublicKey(seed: Uint8Array): Promise<Uint8Array> {
  const pkcs8 = new Uint8Array([0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20, ...seed]);
  const key = await crypto.subtle.importKey("pkcs8", pkcs8, { name: "Ed25519" }, true, ["sign"]);
  const jwk = (await crypto.subtle.exportKey("jwk", key)) as JsonWebKey;
  return decodeBase64(jwk.x!.replace(/-/g, "+").replace(/_/g, "/"))!;
}

function decodeKeyBytes(input: string): Uint8Array | null {
  const hex = input.replace(/^0x/i, "");
  if (/^[0-9a-fA-F]+$/.test(hex) && hex.length % 2 === 0 && (hex.length === 64 || hex.length === 128)) {
    return Uint8Array.from(hex.match(/../g)!.map((h) => Number.parseInt(h, 16)));
  }
  if (input.length > 100 || !/^[A-Za-z0-9+/_-]+=*$/.test(input)) return null;
  return decodeBase64(input.replace(/-/g, "+").replace(/_/g, "/"));
}

function decodeBase64(input: string): Uint8Array | null {
  try {
    const padded = input + "=".repeat((4 - (input.length % 4)) % 4);
    return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

const toHex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);
