import { verifyEvmAgreementSignature } from "../agreements/evm-agreement-signature.ts";
import { chainConfig } from "../chains/chain-config.ts";
import type { ContractSignatureVerifier } from "../chains/chain-port.ts";
import { verifySolanaSignature, verifyTonConnectSignData } from "../domain/wallet-signatures.ts";
import type { ProgramContext } from "./program-context.ts";

/**
 * What wallet signature checks need: the widget's own hosts (TON Connect
 * domains: EMBED_HOST and the host the request reached, which is what the
 * widget's TON Connect manifest names) and, optionally, a chain adapter that
 * can call the chain for smart-contract wallet signatures (absent or without
 * the capability: EOAs only).
 */
export type WalletProofDeps = { widgetHosts: string[]; chain?: ContractSignatureVerifier | null };

/** A wallet's signature over a text, as the widget sends it (TON Connect adds its key, timestamp and domain). */
export type WalletProof = {
  /** The wallet, in the program chain's canonical form. */
  address: string;
  message: string;
  walletSignature: string;
  publicKey?: string;
  timestamp?: number;
  domain?: string;
};

/**
 * The domains a TON Connect signature may name: the widget's own host (in the
 * widget, the iframe is the TON Connect dApp) and the hosts of the program's
 * origins (a merchant page running TON Connect itself).
 */
const allowedDomains = (origins: string[], widgetHosts: string[]) => [...widgetHosts, ...origins.map((o) => new URL(o).host)];

/**
 * Whether `proof` is the wallet's own signature of its message on the
 * program's chain: EVM EIP-191 (smart-contract wallets through ERC-1271 or
 * ERC-6492 when `deps.chain` can call the chain), Solana ed25519, TON Connect
 * `signData` text (the key must be the address's wallet, the domain the
 * widget's or a program origin's host, the timestamp recent). Null when it
 * is; otherwise the reason, naming `walletSignature`. The one place the
 * embed worker verifies a wallet signature (agreements at accept, wallet
 * sessions), so it can be pointed at the platform's unified verifier.
 */
export async function verifyWalletProof(deps: WalletProofDeps, ctx: ProgramContext, proof: WalletProof, now: Date): Promise<string | null> {
  const family = chainConfig(ctx.chain).family;
  if (family === "EVM") {
    const ok = await verifyEvmAgreementSignature(deps.chain, ctx.chain, { address: proof.address, message: proof.message, signature: proof.walletSignature });
    return ok ? null : "walletSignature: is not the wallet's EIP-191 signature of the challenge message";
  }
  if (family === "SOLANA") {
    const ok = await verifySolanaSignature({ address: proof.address, message: proof.message, signature: proof.walletSignature });
    return ok ? null : "walletSignature: is not the wallet's ed25519 signature of the challenge message";
  }
  if (!proof.publicKey || proof.timestamp === undefined || !proof.domain) {
    return "walletSignature: a TON Connect signature needs publicKey, timestamp and domain";
  }
  const result = await verifyTonConnectSignData({
    address: proof.address,
    publicKey: proof.publicKey,
    signature: proof.walletSignature,
    timestamp: proof.timestamp,
    domain: proof.domain,
    text: proof.message,
    nowSeconds: Math.floor(now.getTime() / 1000),
    allowedDomains: allowedDomains(ctx.program.allowedOrigins, deps.widgetHosts),
  });
  return result.ok ? null : `walletSignature: ${result.reason}`;
}
