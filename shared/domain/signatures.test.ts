import { describe, expect, test } from "bun:test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { verifyEvmPersonalSignature } from "./signatures.ts";

const account = privateKeyToAccount(generatePrivateKey());
const other = privateKeyToAccount(generatePrivateKey());
const message = [
  "Acme Store agreement",
  `Wallet: ${account.address}`,
  "Amount: 100.00 USDC, 7 days, total due 102.00",
  "Challenge: 0b0e5f8a-51c4-4c1f-9a59-6a3f0a4f3c11",
].join("\n");
const signature = await account.signMessage({ message });

describe("verifyEvmPersonalSignature", () => {
  test("accepts the signer's personal_sign, whatever the address casing", async () => {
    expect(await verifyEvmPersonalSignature({ address: account.address, message, signature })).toBe(true);
    expect(await verifyEvmPersonalSignature({ address: account.address.toLowerCase(), message, signature })).toBe(true);
    const upper = `0x${signature.slice(2).toUpperCase()}`;
    expect(await verifyEvmPersonalSignature({ address: account.address, message, signature: upper })).toBe(true);
  });

  test("accepts v as 0/1 as well as 27/28", async () => {
    const v = parseInt(signature.slice(-2), 16);
    const yParity = (v - 27).toString(16).padStart(2, "0");
    const withParity = signature.slice(0, -2) + yParity;
    expect(await verifyEvmPersonalSignature({ address: account.address, message, signature: withParity })).toBe(true);
  });

  test("refuses another account's address", async () => {
    expect(await verifyEvmPersonalSignature({ address: other.address, message, signature })).toBe(false);
  });

  test("refuses another account's signature", async () => {
    const theirs = await other.signMessage({ message });
    expect(await verifyEvmPersonalSignature({ address: account.address, message, signature: theirs })).toBe(false);
  });

  test("refuses a tampered message", async () => {
    for (const tampered of [message.replace("100.00", "1000.00"), `${message} `, message.slice(0, -1), ""]) {
      expect(await verifyEvmPersonalSignature({ address: account.address, message: tampered, signature })).toBe(false);
    }
  });

  test("refuses a signature over the raw hash instead of personal_sign", async () => {
    const { keccak256, toHex } = await import("viem");
    const raw = await account.sign({ hash: keccak256(toHex(message)) });
    expect(await verifyEvmPersonalSignature({ address: account.address, message, signature: raw })).toBe(false);
  });

  test("refuses garbage and wrong lengths without throwing", async () => {
    const garbage = [
      "",
      "0x",
      "not a signature",
      signature.slice(2), // no 0x prefix
      signature.slice(0, -2), // 64 bytes
      `${signature}00`, // 66 bytes
      signature.slice(0, -1), // odd length
      `0x${"zz".repeat(65)}`,
      `0x${"00".repeat(65)}`, // r = s = 0
      `0x${"ff".repeat(65)}`, // r, s above the curve order, v = 255
      `${signature.slice(0, -2)}1d`, // v = 29
      `${signature.slice(0, -2)}02`, // v = 2
      `0x${"ff".repeat(32)}${signature.slice(66)}`, // r above the curve order
    ];
    for (const bad of garbage) {
      const ok = await verifyEvmPersonalSignature({ address: account.address, message, signature: bad });
      expect({ bad, ok }).toEqual({ bad, ok: false });
    }
  });

  test("refuses a malformed address without throwing", async () => {
    const ton = "EQDtFpEwcFAEcRe5mLVh2N6C0x-_hJEM7W61_JLnSF74p4q2";
    for (const address of ["", "0x1234", account.address.slice(2), `${account.address}00`, ton]) {
      expect(await verifyEvmPersonalSignature({ address, message, signature })).toBe(false);
    }
  });

  test("a changed digit in r or s never verifies", async () => {
    for (const i of [2, 10, 65, 66, 100, 129]) {
      const c = signature[i]!;
      const flipped = signature.slice(0, i) + (c === "0" ? "1" : "0") + signature.slice(i + 1);
      expect(await verifyEvmPersonalSignature({ address: account.address, message, signature: flipped })).toBe(false);
    }
  });
});
