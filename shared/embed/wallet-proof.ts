import { widgetDrawDomains } from "../agreements/ton-connect-domains.ts";
import { verifyWalletSignature } from "../agreements/verify-wallet-signature.ts";
import type { ContractSignatureVerifier } from "../chains/chain-port.ts";
import { clockOffsetFor } from "../tenants/tenant-context.ts";
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
 * Whether `proof` is the wallet's own signature of its message on the
 * program's chain, through the platform's one verifier
 * (`verifyWalletSignature`: EIP-191 with ERC-1271/6492, Solana ed25519, TON
 * Connect `signData` whose domain is the widget's or a program origin's
 * host). `now` is the tenant's clock; a TON timestamp is judged by the real
 * one. Null when it is; otherwise the 400 message, naming its field.
 */
export async function verifyWalletProof(
  deps: WalletProofDeps,
  { program, proof, now }: { program: ProgramContext; proof: WalletProof; now: Date },
): Promise<string | null> {
  const result = await verifyWalletSignature(
    { contracts: deps.chain },
    {
      chain: program.chain,
      address: proof.address,
      message: proof.message,
      signature: proof.walletSignature,
      ton: { publicKey: proof.publicKey, timestamp: proof.timestamp, domain: proof.domain },
      allowedDomains: widgetDrawDomains(program.program, deps.widgetHosts),
      now: new Date(now.getTime() - clockOffsetFor(program.tenant, program.mode)),
    },
  );
  return result.ok ? null : result.reason;
}
