import { Buffer } from "node:buffer";
import { keyPairFromSeed, sign } from "@ton/crypto";
import { WalletContractV4, WalletContractV5R1 } from "@ton/ton";
import { encodeBase58 } from "../../domain/addresses.ts";
import { tonConnectSignDataTextHash } from "../../domain/wallet-signatures.ts";

/**
 * Wallets made in a test, signing as real ones do, for every tier (Bun and
 * workerd): a TON wallet answering TON Connect `signData` with a `text`
 * payload, and a Solana wallet signing message bytes with ed25519. EVM tests
 * use viem's `privateKeyToAccount` directly.
 */

export type TestTonWallet = {
  /** User-friendly, testnet flag, non-bounceable: what a testnet wallet shows. */
  address: string;
  /** 32 bytes in hex, as TON Connect's `ton_addr` carries it. */
  publicKey: string;
  /** The `signature`, `timestamp` and `domain` of a signData reply for `text`. */
  signData(input: { text: string; domain: string; timestamp: number }): Promise<{ signature: string; timestamp: number; domain: string; publicKey: string }>;
};

/** A fresh key's standard wallet, v4 or v5r1 (testnet wallet id), workchain 0. */
export function testTonWallet(version: "v4" | "v5r1" = "v4"): TestTonWallet {
  const keys = keyPairFromSeed(Buffer.from(crypto.getRandomValues(new Uint8Array(32))));
  const contract =
    version === "v4"
      ? WalletContractV4.create({ workchain: 0, publicKey: keys.publicKey })
      : WalletContractV5R1.create({ publicKey: keys.publicKey, walletId: { networkGlobalId: -3 } });
  const address = contract.address.toString({ testOnly: true, bounceable: false });
  const publicKey = keys.publicKey.toString("hex");
  return {
    address,
    publicKey,
    async signData({ text, domain, timestamp }) {
      const hash = await tonConnectSignDataTextHash({ address, domain, timestamp, text });
      return { signature: sign(Buffer.from(hash), keys.secretKey).toString("base64"), timestamp, domain, publicKey };
    },
  };
}

export type TestSolanaWallet = {
  /** base58 of the ed25519 public key. */
  address: string;
  /** ed25519 of the message's UTF-8 bytes, base58 (what wallets' signMessage gives, encoded) or base64. */
  signMessage(message: string, encoding?: "base58" | "base64"): Promise<string>;
};

export async function testSolanaWallet(): Promise<TestSolanaWallet> {
  const pair = (await crypto.subtle.generateKey("Ed25519", true, ["sign", "verify"])) as CryptoKeyPair;
  const raw = new Uint8Array((await crypto.subtle.exportKey("raw", pair.publicKey)) as ArrayBuffer);
  return {
    address: encodeBase58(raw),
    async signMessage(message, encoding = "base58") {
      const bytes = new Uint8Array(await crypto.subtle.sign("Ed25519", pair.privateKey, new TextEncoder().encode(message)));
      return encoding === "base58" ? encodeBase58(bytes) : Buffer.from(bytes).toString("base64");
    },
  };
}
