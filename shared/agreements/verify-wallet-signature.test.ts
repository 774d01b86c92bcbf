import { describe, expect, test } from "bun:test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { DomainError } from "../domain/errors.ts";
import { testSolanaWallet, testTonWallet } from "./testing/test-wallets.ts";
import { verifyWalletSignature, type WalletSignatureInput } from "./verify-wallet-signature.ts";

const message = "svc credit loan agreement\nAmount: 100.00 USDT\nChallenge: 0b0e5f8a-51c4-4c1f-9a59-6a3f0a4f3c11";
const now = new Date("2026-03-01T12:00:00Z");
const nowSeconds = Math.floor(now.getTime() / 1000);
const DOMAIN = "embed.svc-credit.example";
const allowedDomains = [DOMAIN, "https://shop.example"];

describe("EVM (EIP-191)", () => {
  const eoa = privateKeyToAccount(generatePrivateKey());
  const input = (signature: string): WalletSignatureInput => ({ chain: "POLYGON_AMOY", address: eoa.address, message, signature, now });

  test("the wallet's personal_sign of the message verifies", async () => {
    expect(await verifyWalletSignature({}, input(await eoa.signMessage({ message })))).toEqual({ ok: true });
  });

  test("another wallet's signature, another message, garbage: refused naming walletSignature", async () => {
    const refused = { ok: false, field: "walletSignature", reason: "walletSignature: is not the wallet's EIP-191 signature of the challenge message" } as const;
    expect(await verifyWalletSignature({}, input(await privateKeyToAccount(generatePrivateKey()).signMessage({ message })))).toEqual(refused);
    expect(await verifyWalletSignature({}, input(await eoa.signMessage({ message: `${message}.` })))).toEqual(refused);
    expect(await verifyWalletSignature({}, input("0x1234"))).toEqual(refused);
  });

  test("a contract wallet's signature goes to the chain port; a chain that cannot be reached is 503, not a refusal", async () => {
    const wallet = privateKeyToAccount(generatePrivateKey()).address;
    const signature = await privateKeyToAccount(generatePrivateKey()).signMessage({ message });
    const yes = { verifyContractSignature: async () => true };
    expect(await verifyWalletSignature({ contracts: yes }, { chain: "BASE", address: wallet, message, signature, now })).toEqual({ ok: true });
    const down = { verifyContractSignature: async () => Promise.reject(new Error("fetch failed")) };
    const error = await verifyWalletSignature({ contracts: down }, { chain: "BASE", address: wallet, message, signature, now }).catch((e) => e);
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).status).toBe(503);
    expect((error as DomainError).headers["Retry-After"]).toBeDefined();
  });
});

describe("TON Connect signData", () => {
  for (const version of ["v4", "v5r1"] as const) {
    test(`a ${version} wallet's signature verifies`, async () => {
      const wallet = testTonWallet(version);
      const signed = await wallet.signData({ text: message, domain: DOMAIN, timestamp: nowSeconds - 30 });
      const result = await verifyWalletSignature(
        {},
        { chain: "TON_TESTNET", address: wallet.address, message, signature: signed.signature, ton: signed, allowedDomains, now },
      );
      expect(result).toEqual({ ok: true });
    });
  }

  test("a merchant page's origin among the allowed is a valid domain", async () => {
    const wallet = testTonWallet("v4");
    const signed = await wallet.signData({ text: message, domain: "shop.example", timestamp: nowSeconds });
    expect(
      await verifyWalletSignature({}, { chain: "TON", address: wallet.address, message, signature: signed.signature, ton: signed, allowedDomains, now }),
    ).toEqual({ ok: true });
  });

  const wallet = testTonWallet("v5r1");
  const verify = async (over: { text?: string; domain?: string; timestamp?: number; publicKey?: string; signer?: ReturnType<typeof testTonWallet> } = {}) => {
    const signed = await (over.signer ?? wallet).signData({
      text: over.text ?? message,
      domain: over.domain ?? DOMAIN,
      timestamp: over.timestamp ?? nowSeconds - 5,
    });
    return verifyWalletSignature(
      {},
      {
        chain: "TON_TESTNET",
        address: wallet.address,
        message,
        signature: signed.signature,
        ton: { ...signed, publicKey: over.publicKey ?? signed.publicKey },
        allowedDomains,
        now,
      },
    );
  };

  test("a tampered message: refused naming walletSignature", async () => {
    expect(await verify({ text: message.replace("100.00", "1000.00") })).toEqual({
      ok: false,
      field: "walletSignature",
      reason: "walletSignature: is not the wallet's TON Connect signData signature of the challenge message",
    });
  });

  test("a domain not allowed: refused naming domain", async () => {
    expect(await verify({ domain: "evil.example" })).toEqual({
      ok: false,
      field: "domain",
      reason: "domain: is not an allowed TON Connect domain (the widget host, or the host of a widget program's allowed origin)",
    });
  });

  test("a stale timestamp (over 15 minutes) or one from the future: refused naming timestamp", async () => {
    expect(await verify({ timestamp: nowSeconds - 901 })).toMatchObject({ ok: false, field: "timestamp", reason: expect.stringContaining("too old") });
    expect(await verify({ timestamp: nowSeconds + 61 })).toMatchObject({ ok: false, field: "timestamp", reason: expect.stringContaining("future") });
    expect(await verify({ timestamp: nowSeconds - 900 })).toEqual({ ok: true });
  });

  test("a key that is not the address's, even signing correctly: refused naming publicKey", async () => {
    const other = testTonWallet("v5r1");
    expect(await verify({ signer: other, publicKey: other.publicKey })).toEqual({
      ok: false,
      field: "publicKey",
      reason: "publicKey: does not belong to the wallet address (no standard v4 or v5r1 wallet of this key has it)",
    });
  });

  test("each missing TON field is named", async () => {
    const signed = await wallet.signData({ text: message, domain: DOMAIN, timestamp: nowSeconds });
    const base = { chain: "TON_TESTNET" as const, address: wallet.address, message, signature: signed.signature, allowedDomains, now };
    expect(await verifyWalletSignature({}, base)).toMatchObject({
      ok: false,
      field: "publicKey",
      reason: "publicKey: is required for a TON Connect signature (with timestamp and domain)",
    });
    expect(await verifyWalletSignature({}, { ...base, ton: { publicKey: signed.publicKey } })).toMatchObject({ ok: false, field: "timestamp" });
    expect(await verifyWalletSignature({}, { ...base, ton: { publicKey: signed.publicKey, timestamp: signed.timestamp } })).toMatchObject({
      ok: false,
      field: "domain",
    });
    expect(await verifyWalletSignature({}, { ...base, ton: { ...signed, publicKey: "zz" } })).toMatchObject({ ok: false, field: "publicKey" });
  });
});

describe("Solana (ed25519)", () => {
  test("the wallet's signature of the message bytes verifies, base58 and base64", async () => {
    const sol = await testSolanaWallet();
    for (const encoding of ["base58", "base64"] as const) {
      const signature = await sol.signMessage(message, encoding);
      expect(await verifyWalletSignature({}, { chain: "SOLANA_DEVNET", address: sol.address, message, signature, now })).toEqual({ ok: true });
    }
  });

  test("another wallet's signature, a tampered message, garbage: refused naming walletSignature", async () => {
    const sol = await testSolanaWallet();
    const other = await testSolanaWallet();
    const refused = { ok: false, field: "walletSignature", reason: "walletSignature: is not the wallet's ed25519 signature of the challenge message" } as const;
    for (const signature of [
      await other.signMessage(message),
      await other.signMessage(message, "base64"),
      await sol.signMessage(`${message}!`),
      "not-a-signature",
    ]) {
      expect(await verifyWalletSignature({}, { chain: "SOLANA_DEVNET", address: sol.address, message, signature, now })).toEqual(refused);
    }
  });
});
