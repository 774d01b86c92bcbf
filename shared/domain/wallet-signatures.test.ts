import { describe, expect, test } from "bun:test";
import { Address } from "@ton/core";
import { getSecureRandomBytes, keyPairFromSeed, mnemonicNew, mnemonicToPrivateKey, sha256_sync, sign } from "@ton/crypto";
import { WalletContractV4, WalletContractV5R1 } from "@ton/ton";
import { encodeBase58 } from "./addresses.ts";
import { TON_SIGN_DATA_REASONS as R, tonConnectSignDataTextHash, verifySolanaSignature, verifyTonConnectSignData } from "./wallet-signatures.ts";

const message = ["Acme Store agreement", "Amount: 100.00 USDT, 7 days, total due 102.00 — ✓", "Challenge: 0b0e5f8a-51c4-4c1f-9a59-6a3f0a4f3c11"].join("\n");

const toBase64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");
const toBase64Url = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64url");

// ---------------------------------------------------------------------------
// Solana
// ---------------------------------------------------------------------------

async function solanaKey() {
  const pair = (await crypto.subtle.generateKey("Ed25519", true, ["sign", "verify"])) as CryptoKeyPair;
  const raw = new Uint8Array((await crypto.subtle.exportKey("raw", pair.publicKey)) as ArrayBuffer);
  const signBytes = async (text: string) => new Uint8Array(await crypto.subtle.sign("Ed25519", pair.privateKey, new TextEncoder().encode(text)));
  return { address: encodeBase58(raw), signBytes };
}

const sol = await solanaKey();
const solOther = await solanaKey();
const solSig = await sol.signBytes(message);

describe("verifySolanaSignature", () => {
  test("accepts the key's signature as base58, base64 and base64url, padded or not", async () => {
    for (const signature of [encodeBase58(solSig), toBase64(solSig), toBase64(solSig).replace(/=+$/, ""), toBase64Url(solSig)]) {
      expect(await verifySolanaSignature({ address: sol.address, message, signature })).toBe(true);
    }
  });

  test("refuses another key's address", async () => {
    expect(await verifySolanaSignature({ address: solOther.address, message, signature: encodeBase58(solSig) })).toBe(false);
  });

  test("refuses another key's signature", async () => {
    const theirs = await solOther.signBytes(message);
    for (const signature of [encodeBase58(theirs), toBase64(theirs)]) {
      expect(await verifySolanaSignature({ address: sol.address, message, signature })).toBe(false);
    }
  });

  test("refuses a tampered message", async () => {
    for (const tampered of [message.replace("100.00", "1000.00"), `${message} `, message.slice(0, -1), ""]) {
      expect(await verifySolanaSignature({ address: sol.address, message: tampered, signature: encodeBase58(solSig) })).toBe(false);
    }
  });

  test("refuses a tampered signature", async () => {
    const flipped = solSig.slice();
    flipped[10] = flipped[10]! ^ 1;
    expect(await verifySolanaSignature({ address: sol.address, message, signature: encodeBase58(flipped) })).toBe(false);
  });

  test("refuses garbage and wrong lengths without throwing", async () => {
    const b58 = encodeBase58(solSig);
    const b64 = toBase64(solSig);
    const garbage: unknown[] = [
      "",
      "not a signature",
      b58.slice(0, -1), // 63-ish bytes
      `${b58}1`, // a leading-zero-free string one digit longer: not 64 bytes
      b64.slice(0, -4), // 63 bytes
      `${b64}AAAA`, // 67 bytes
      `0x${Buffer.from(solSig).toString("hex")}`, // hex is not accepted
      Buffer.from(solSig).toString("hex"),
      `+-${"A".repeat(84)}==`, // both alphabets at once
      `${b64.slice(0, 85)}B==`, // non-canonical trailing bits
      "=".repeat(88),
      null,
      undefined,
      123,
      { length: 88 },
    ];
    for (const signature of garbage) {
      expect(await verifySolanaSignature({ address: sol.address, message, signature: signature as string })).toBe(false);
    }
    const badAddresses: unknown[] = ["", "0".repeat(44), sol.address.slice(0, -1), `${sol.address}1`, "1".repeat(45), null, 7];
    for (const address of badAddresses) {
      expect(await verifySolanaSignature({ address: address as string, message, signature: b58 })).toBe(false);
    }
    expect(await verifySolanaSignature({ address: sol.address, message: null as unknown as string, signature: b58 })).toBe(false);
    expect(await verifySolanaSignature(null as never)).toBe(false);
  });
});

// ---------------------------------------------------------------------------
// TON Connect signData
// ---------------------------------------------------------------------------

/**
 * The sign-data hash built independently of the module, with Buffer writes as
 * in the spec's reference implementation (mois-ilya/sign-data-reference,
 * src/utils.ts createTextBinaryHash).
 */
function referenceHash(address: Address, domain: string, timestamp: number, text: string): Buffer {
  const wc = Buffer.alloc(4);
  wc.writeInt32BE(address.workChain);
  const domainBytes = Buffer.from(domain, "utf8");
  const domainLen = Buffer.alloc(4);
  domainLen.writeUInt32BE(domainBytes.length);
  const ts = Buffer.alloc(8);
  ts.writeBigUInt64BE(BigInt(timestamp));
  const payload = Buffer.from(text, "utf8");
  const payloadLen = Buffer.alloc(4);
  payloadLen.writeUInt32BE(payload.length);
  return sha256_sync(
    Buffer.concat([
      Buffer.from([0xff, 0xff]),
      Buffer.from("ton-connect/sign-data/", "utf8"),
      wc,
      address.hash,
      domainLen,
      domainBytes,
      ts,
      Buffer.from("txt", "utf8"),
      payloadLen,
      payload,
    ]),
  );
}

const mnemonic = await mnemonicNew();
const tonKey = await mnemonicToPrivateKey(mnemonic);
const tonOther = keyPairFromSeed(await getSecureRandomBytes(32));

const v4 = WalletContractV4.create({ workchain: 0, publicKey: tonKey.publicKey }).address;
const v5 = WalletContractV5R1.create({ workchain: 0, publicKey: tonKey.publicKey }).address;
const v5Testnet = WalletContractV5R1.create({ publicKey: tonKey.publicKey, walletId: { networkGlobalId: -3 } }).address;
const otherV4 = WalletContractV4.create({ workchain: 0, publicKey: tonOther.publicKey }).address;

const now = 1_767_225_600;
const domain = "widget.svc-credit.example";
const allowedDomains = ["https://widget.svc-credit.example", "https://merchant.example"];

function signTon(address: Address, opts: { key?: typeof tonKey; domain?: string; timestamp?: number; text?: string } = {}) {
  const ts = opts.timestamp ?? now - 5;
  const dom = opts.domain ?? domain;
  const hash = referenceHash(address, dom, ts, opts.text ?? message);
  return { signature: sign(hash, (opts.key ?? tonKey).secretKey).toString("base64"), timestamp: ts, domain: dom };
}

function request(address: Address, overrides: Partial<Parameters<typeof verifyTonConnectSignData>[0]> = {}) {
  const signed = signTon(address);
  return {
    address: address.toRawString(),
    publicKey: tonKey.publicKey.toString("hex"),
    signature: signed.signature,
    timestamp: signed.timestamp,
    domain: signed.domain,
    text: message,
    nowSeconds: now,
    allowedDomains,
    ...overrides,
  };
}

describe("tonConnectSignDataTextHash", () => {
  test("matches the reference construction, for both workchains and multibyte text and domains", async () => {
    for (const address of [v4, v5, new Address(-1, v4.hash)]) {
      for (const [dom, text] of [
        [domain, message],
        ["127.0.0.1:5173", ""],
        ["bücher.example", "ΔΣ 🙂"],
      ] as const) {
        const ours = await tonConnectSignDataTextHash({ address: address.toString(), domain: dom, timestamp: now, text });
        expect(Buffer.from(ours).toString("hex")).toBe(referenceHash(address, dom, now, text).toString("hex"));
      }
    }
  });

  test("throws on an address that is not TON", async () => {
    await expect(tonConnectSignDataTextHash({ address: "nope", domain, timestamp: now, text: "" })).rejects.toThrow(TypeError);
  });
});

describe("verifyTonConnectSignData", () => {
  test("accepts a v4 wallet, raw and friendly (bounceable, non-bounceable, testnet, base64)", async () => {
    const { signature, timestamp } = signTon(v4);
    for (const address of [
      v4.toRawString(),
      v4.toRawString().toUpperCase().replace("0X", "0x"),
      v4.toString(),
      v4.toString({ bounceable: false }),
      v4.toString({ testOnly: true, bounceable: false }),
      v4.toString({ urlSafe: false }),
    ]) {
      expect(await verifyTonConnectSignData(request(v4, { address, signature, timestamp }))).toEqual({ ok: true });
    }
  });

  test("accepts a v5r1 wallet, mainnet and testnet wallet ids, raw and friendly", async () => {
    for (const wallet of [v5, v5Testnet]) {
      const { signature, timestamp } = signTon(wallet);
      for (const address of [wallet.toRawString(), wallet.toString({ bounceable: false })]) {
        expect(await verifyTonConnectSignData(request(wallet, { address, signature, timestamp }))).toEqual({ ok: true });
      }
    }
  });

  test("accepts wallets on workchain -1", async () => {
    const wallets = [
      WalletContractV4.create({ workchain: -1, publicKey: tonKey.publicKey }).address,
      WalletContractV5R1.create({
        publicKey: tonKey.publicKey,
        walletId: { networkGlobalId: -239, context: { walletVersion: "v5r1", workchain: -1, subwalletNumber: 0 } },
      }).address,
      WalletContractV5R1.create({ workchain: -1, publicKey: tonKey.publicKey }).address,
    ];
    for (const wallet of wallets) {
      expect(wallet.workChain).toBe(-1);
      expect(await verifyTonConnectSignData(request(wallet))).toEqual({ ok: true });
    }
  });

  test("accepts the public key as hex (either case, 0x or not) and base64", async () => {
    for (const publicKey of [
      tonKey.publicKey.toString("hex").toUpperCase(),
      `0x${tonKey.publicKey.toString("hex")}`,
      tonKey.publicKey.toString("base64"),
      tonKey.publicKey.toString("base64url"),
    ]) {
      expect(await verifyTonConnectSignData(request(v4, { publicKey }))).toEqual({ ok: true });
    }
  });

  test("accepts a URL-safe signature", async () => {
    const signature = Buffer.from(signTon(v4).signature, "base64").toString("base64url");
    expect(await verifyTonConnectSignData(request(v4, { signature }))).toEqual({ ok: true });
  });

  test("refuses a public key that does not belong to the address, even with a valid signature by it", async () => {
    // The other key signs for the v4 address of tonKey: signature fine, binding not.
    const { signature, timestamp } = signTon(v4, { key: tonOther });
    const result = await verifyTonConnectSignData(request(v4, { publicKey: tonOther.publicKey.toString("hex"), signature, timestamp }));
    expect(result).toEqual({ ok: false, reason: R.keyNotForAddress });
  });

  test("refuses an address of a non-default subwallet", async () => {
    const sub = WalletContractV4.create({ workchain: 0, publicKey: tonKey.publicKey, walletId: 698983191 + 1 }).address;
    expect(await verifyTonConnectSignData(request(sub))).toEqual({ ok: false, reason: R.keyNotForAddress });
  });

  test("refuses another key's signature", async () => {
    const { signature } = signTon(v4, { key: tonOther });
    expect(await verifyTonConnectSignData(request(v4, { signature }))).toEqual({ ok: false, reason: R.signatureInvalid });
    // and the other key's own wallet with our signature
    const mine = signTon(otherV4);
    expect(await verifyTonConnectSignData(request(otherV4, { publicKey: tonOther.publicKey.toString("hex"), signature: mine.signature }))).toEqual({
      ok: false,
      reason: R.signatureInvalid,
    });
  });

  test("refuses a signature made for another address of the same key", async () => {
    const { signature } = signTon(v5);
    expect(await verifyTonConnectSignData(request(v4, { signature }))).toEqual({ ok: false, reason: R.signatureInvalid });
  });

  test("refuses tampered text", async () => {
    for (const text of [message.replace("100.00", "1000.00"), `${message} `, message.slice(0, -1), ""]) {
      expect(await verifyTonConnectSignData(request(v4, { text }))).toEqual({ ok: false, reason: R.signatureInvalid });
    }
  });

  test("refuses a domain that is not allowed", async () => {
    const signed = signTon(v4, { domain: "evil.example" });
    expect(await verifyTonConnectSignData(request(v4, { domain: signed.domain, signature: signed.signature }))).toEqual({
      ok: false,
      reason: R.domainNotAllowed,
    });
    expect(await verifyTonConnectSignData(request(v4, { allowedDomains: [] }))).toEqual({
      ok: false,
      reason: R.domainNotAllowed,
    });
    // The port is part of the host; a scheme in the domain never matches.
    for (const [dom, allowed] of [
      ["widget.svc-credit.example:8443", ["https://widget.svc-credit.example"]],
      ["widget.svc-credit.example", ["https://widget.svc-credit.example:8443"]],
      ["https://widget.svc-credit.example", ["https://widget.svc-credit.example"]],
      ["svc-credit.example", ["https://widget.svc-credit.example"]],
      ["widget.svc-credit.example", ["null", "", "not a url://"]],
    ] as const) {
      const s = signTon(v4, { domain: dom });
      expect(await verifyTonConnectSignData(request(v4, { domain: dom, signature: s.signature, allowedDomains: allowed }))).toEqual({
        ok: false,
        reason: R.domainNotAllowed,
      });
    }
  });

  test("a domain is matched against origins' hosts and bare hosts, ignoring case", async () => {
    for (const [dom, allowed] of [
      ["127.0.0.1:5173", ["http://127.0.0.1:5173"]],
      ["127.0.0.1:5173", ["127.0.0.1:5173"]],
      ["merchant.example", ["https://Merchant.Example:443"]], // default port dropped, as URL.host does
      ["Widget.SVC-credit.example", ["https://widget.svc-credit.example"]],
      ["merchant.example", ["MERCHANT.EXAMPLE"]],
    ] as const) {
      const s = signTon(v4, { domain: dom });
      expect(await verifyTonConnectSignData(request(v4, { domain: dom, signature: s.signature, allowedDomains: allowed }))).toEqual({ ok: true });
    }
  });

  test("refuses an expired timestamp, accepts one exactly maxAgeSeconds old", async () => {
    const expired = signTon(v4, { timestamp: now - 901 });
    expect(await verifyTonConnectSignData(request(v4, { timestamp: expired.timestamp, signature: expired.signature }))).toEqual({
      ok: false,
      reason: R.timestampExpired,
    });
    const edge = signTon(v4, { timestamp: now - 900 });
    expect(await verifyTonConnectSignData(request(v4, { timestamp: edge.timestamp, signature: edge.signature }))).toEqual({
      ok: true,
    });
    const short = signTon(v4, { timestamp: now - 31 });
    expect(await verifyTonConnectSignData(request(v4, { timestamp: short.timestamp, signature: short.signature, maxAgeSeconds: 30 }))).toEqual({
      ok: false,
      reason: R.timestampExpired,
    });
  });

  test("refuses a timestamp more than 60 s in the future, accepts 60 s", async () => {
    const future = signTon(v4, { timestamp: now + 61 });
    expect(await verifyTonConnectSignData(request(v4, { timestamp: future.timestamp, signature: future.signature }))).toEqual({
      ok: false,
      reason: R.timestampInFuture,
    });
    const skew = signTon(v4, { timestamp: now + 60 });
    expect(await verifyTonConnectSignData(request(v4, { timestamp: skew.timestamp, signature: skew.signature }))).toEqual({
      ok: true,
    });
  });

  test("refuses a timestamp other than the one signed", async () => {
    expect(await verifyTonConnectSignData(request(v4, { timestamp: now - 6 }))).toEqual({
      ok: false,
      reason: R.signatureInvalid,
    });
  });

  test("refuses malformed fields with their own reasons, never throwing", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ address: "" }, R.badAddress],
      [{ address: "EQ-not-an-address" }, R.badAddress],
      // Bad checksum: the last character changed (to "A", or "B" when it was "A": the key is random, so it once already was).
      [{ address: `${v4.toString().slice(0, -1)}${v4.toString().endsWith("A") ? "B" : "A"}` }, R.badAddress],
      [{ address: `5:${v4.hash.toString("hex")}` }, R.badAddress],
      [{ publicKey: "" }, R.badPublicKey],
      [{ publicKey: tonKey.publicKey.toString("hex").slice(2) }, R.badPublicKey],
      [{ publicKey: Buffer.alloc(33, 1).toString("base64") }, R.badPublicKey],
      [{ signature: "" }, R.badSignature],
      [{ signature: Buffer.alloc(63, 1).toString("base64") }, R.badSignature],
      [{ signature: Buffer.alloc(64, 1).toString("hex") }, R.badSignature],
      [{ signature: "!".repeat(88) }, R.badSignature],
      [{ timestamp: -1 }, R.badTimestamp],
      [{ timestamp: 1.5 }, R.badTimestamp],
      [{ timestamp: "1767225595" }, R.badTimestamp],
      [{ timestamp: Number.NaN }, R.badTimestamp],
      [{ domain: "" }, R.badDomain],
      [{ domain: "a".repeat(300) }, R.badDomain],
      [{ nowSeconds: Number.NaN }, R.badClock],
      [{ maxAgeSeconds: -1 }, R.badClock],
      [{ text: undefined }, R.malformed],
      [{ allowedDomains: "widget.svc-credit.example" }, R.malformed],
      [{ address: 42 }, R.malformed],
    ];
    for (const [override, reason] of cases) {
      expect(await verifyTonConnectSignData(request(v4, override as never))).toEqual({ ok: false, reason });
    }
    expect(await verifyTonConnectSignData(null as never)).toEqual({ ok: false, reason: R.malformed });
  });

  test("refuses a public key that is not a curve point, without throwing", async () => {
    // Its own v4 wallet, so the binding check passes and the key reaches ed25519.
    const notAPoint = Buffer.alloc(32, 0xff);
    const wallet = WalletContractV4.create({ workchain: 0, publicKey: notAPoint }).address;
    const result = await verifyTonConnectSignData(request(wallet, { publicKey: notAPoint.toString("hex"), signature: signTon(wallet).signature }));
    expect(result).toEqual({ ok: false, reason: R.signatureInvalid });
    // And as another wallet's key, the binding check refuses it first.
    expect(await verifyTonConnectSignData(request(v4, { publicKey: notAPoint.toString("hex") }))).toEqual({
      ok: false,
      reason: R.keyNotForAddress,
    });
  });

  test("every reason is distinct", () => {
    const reasons = Object.values(R);
    expect(new Set(reasons).size).toBe(reasons.length);
  });
});
