import { describe, expect, test } from "bun:test";
import { Address } from "@ton/core";
import fc from "fast-check";
import { canonicalAddress, decodeBase58, encodeBase58, tonAccountAddress } from "./addresses.ts";
import { CHAINS, type Chain } from "./rails.ts";

const EVM_CHAINS: Chain[] = ["POLYGON_AMOY", "BASE_SEPOLIA", "POLYGON", "BASE"];
const TON_CHAINS: Chain[] = ["TON", "TON_TESTNET"];

const ok = (address: string) => ({ ok: true as const, address });
const reasonOf = (chain: Chain, input: string): string => {
  const r = canonicalAddress(chain, input);
  if (r.ok) throw new Error(`${input} was accepted on ${chain}`);
  return r.reason;
};

describe("canonicalAddress on EVM chains", () => {
  // The EIP-55 test vectors plus real contracts (USDC on Base and Polygon, vitalik.eth).
  const checksummed = [
    "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
    "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
    "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
    "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
    "0x52908400098527886E0F7030069857D2E4169EE7",
    "0x8617E340B3D01FA5F11F306F4090FD50E238070D",
    "0xde709f2102306220921060314715629080e2fb77",
    "0x27b1fdb04752bbc536007a920d24acb045561c26",
    "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359",
    "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045",
  ];

  test("a checksummed address is its own canonical form, on every EVM chain", () => {
    for (const chain of EVM_CHAINS) {
      for (const a of checksummed) expect(canonicalAddress(chain, a)).toEqual(ok(a));
    }
  });

  test("all-lowercase and all-uppercase bodies carry no checksum and canonicalize to EIP-55", () => {
    for (const a of checksummed) {
      const body = a.slice(2);
      expect(canonicalAddress("BASE", `0x${body.toLowerCase()}`)).toEqual(ok(a));
      expect(canonicalAddress("POLYGON", `0x${body.toUpperCase()}`)).toEqual(ok(a));
    }
  });

  test("a digits-only body is single-case", () => {
    const a = "0x1234567890123456789012345678901234567890";
    expect(canonicalAddress("BASE", a)).toEqual(ok(a));
  });

  test("a mixed-case address with a wrong checksum is refused", () => {
    // One letter's case flipped in each checksummed vector.
    expect(reasonOf("BASE", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD")).toBe("fails its EIP-55 checksum");
    expect(reasonOf("POLYGON", "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045".replace("dA6", "Da6"))).toBe("fails its EIP-55 checksum");
    expect(reasonOf("BASE_SEPOLIA", "0x833589fcD6eDb6E08f4c7C32D4f71b54bdA02913")).toBe("fails its EIP-55 checksum");
  });

  test("every single-letter case flip of a checksummed address fails (property)", () => {
    const a = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
    const letters = [...a].map((c, i) => [c, i] as const).filter(([c, i]) => i >= 2 && /[a-f]/i.test(c));
    for (const [c, i] of letters) {
      const flipped = a.slice(0, i) + (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()) + a.slice(i + 1);
      const body = flipped.slice(2);
      if (body === body.toLowerCase() || body === body.toUpperCase()) continue;
      expect(reasonOf("BASE", flipped)).toBe("fails its EIP-55 checksum");
    }
  });

  test("wrong shape is refused with the shape reason", () => {
    const shape = "must be a 0x-prefixed 40-hex-digit address";
    for (const bad of [
      "",
      "0x",
      "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe", // 39 digits
      "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed0", // 41 digits
      "5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", // no prefix
      "0X5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", // capital X
      "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeg", // non-hex
      " 0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
      "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed\n",
      "EQDtFpEwcFAEcRe5mLVh2N6C0x-_hJEM7W61_JLnSF74p4q2",
    ]) {
      expect(reasonOf("BASE", bad)).toBe(shape);
    }
  });

  test("canonical form is idempotent and case-insensitive (property)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 20, maxLength: 20 }), (bytes) => {
        const lower = `0x${Buffer.from(bytes).toString("hex")}`;
        const r = canonicalAddress("POLYGON", lower);
        expect(r.ok).toBe(true);
        if (!r.ok) return;
        expect(canonicalAddress("POLYGON", r.address)).toEqual(r);
        expect(canonicalAddress("POLYGON", `0x${lower.slice(2).toUpperCase()}`)).toEqual(r);
        expect(r.address.toLowerCase()).toBe(lower);
      }),
    );
  });
});

describe("canonicalAddress on TON chains", () => {
  const raw = "0:ed1691307050047117b998b561d8de82d31fbf84910ced6eb5fc92e7485ef8a7";
  // One account in every friendly form (literals, so @ton/core is not checking itself).
  const forms = {
    bounceable: "EQDtFpEwcFAEcRe5mLVh2N6C0x-_hJEM7W61_JLnSF74p4q2",
    nonBounceable: "UQDtFpEwcFAEcRe5mLVh2N6C0x-_hJEM7W61_JLnSF74p9dz",
    testnetBounceable: "kQDtFpEwcFAEcRe5mLVh2N6C0x-_hJEM7W61_JLnSF74pzE8",
    testnetNonBounceable: "0QDtFpEwcFAEcRe5mLVh2N6C0x-_hJEM7W61_JLnSF74p2z5",
    standardBase64: "EQDtFpEwcFAEcRe5mLVh2N6C0x+/hJEM7W61/JLnSF74p4q2",
    raw,
    rawUppercase: `0:${raw.slice(2).toUpperCase()}`,
  };

  test("every form of one account canonicalizes to the same raw string, on both TON chains", () => {
    for (const chain of TON_CHAINS) {
      for (const [name, form] of Object.entries(forms)) {
        expect({ name, result: canonicalAddress(chain, form) }).toEqual({ name, result: ok(raw) });
      }
    }
  });

  test("a real mainnet address (the USDT jetton master)", () => {
    const usdt = "EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs";
    const r = canonicalAddress("TON", usdt);
    expect(r).toEqual(ok(Address.parse(usdt).toRawString()));
    if (r.ok) expect(r.address).toMatch(/^0:[0-9a-f]{64}$/);
  });

  test("masterchain (-1) accounts are refused in friendly and raw form: SPEC.md takes raw addresses with the prefix 0: only", () => {
    const master = `-1:${raw.slice(2)}`;
    // The friendly form is valid (its CRC holds) and names a masterchain account.
    expect(Address.parseFriendly("Ef_tFpEwcFAEcRe5mLVh2N6C0x-_hJEM7W61_JLnSF74p3X-").address.toRawString()).toBe(master);
    expect(reasonOf("TON", "Ef_tFpEwcFAEcRe5mLVh2N6C0x-_hJEM7W61_JLnSF74p3X-")).toBe("must be on TON workchain 0");
    expect(reasonOf("TON", master)).toBe("must be on TON workchain 0");
    expect(reasonOf("TON", `1:${raw.slice(2)}`)).toBe("must be on TON workchain 0");
    // Control: the same account id on the basechain.
    expect(canonicalAddress("TON", raw)).toEqual(ok(raw.toLowerCase()));
  });

  test("a friendly address with a bad CRC is refused", () => {
    const bad = `${forms.bounceable.slice(0, -1)}3`; // last CRC character changed
    expect(reasonOf("TON", bad)).toBe("is not a valid TON address: its checksum or tag is wrong");
    // A changed account byte with the old CRC fails too.
    expect(reasonOf("TON", forms.bounceable.replace("DtFp", "DtFq"))).toBe("is not a valid TON address: its checksum or tag is wrong");
  });

  test("a friendly address with an unknown tag byte is refused even with a valid CRC", () => {
    const buf = Buffer.from(Address.parse(raw).toString({ urlSafe: false }), "base64");
    buf[0] = 0x22; // neither bounceable (0x11) nor non-bounceable (0x51)
    const { crc16 } = crcOf(buf.subarray(0, 34));
    buf.set(crc16, 34);
    expect(reasonOf("TON", buf.toString("base64url"))).toBe("is not a valid TON address: its checksum or tag is wrong");
  });

  test("a friendly address on an unsupported workchain is refused", () => {
    const wc5 = new Address(5, Address.parse(raw).hash).toString();
    expect(reasonOf("TON", wc5)).toBe("must be on TON workchain 0");
  });

  test("raw addresses must be workchain 0 with exactly 64 hex digits", () => {
    const hex = raw.slice(2);
    expect(reasonOf("TON", `1:${hex}`)).toBe("must be on TON workchain 0");
    expect(reasonOf("TON", `00:${hex}`)).toBe("must be on TON workchain 0");
    expect(reasonOf("TON", `-0:${hex}`)).toBe("must be on TON workchain 0");
    expect(reasonOf("TON", `0:${hex.slice(1)}`)).toBe("must be a raw TON address of the form 0:<64 hex digits>");
    expect(reasonOf("TON", `0:${hex}0`)).toBe("must be a raw TON address of the form 0:<64 hex digits>");
    expect(reasonOf("TON", "0:")).toBe("must be a raw TON address of the form 0:<64 hex digits>");
  });

  test("anything else is not a TON address", () => {
    const reason = "is not a valid TON address: expected a 48-character EQ…/UQ… address or raw 0:<64 hex digits>";
    for (const bad of [
      "",
      forms.bounceable.slice(1), // 47 characters
      `${forms.bounceable}A`, // 49 characters
      forms.bounceable.replace("-", "."), // outside base64
      `0:${raw.slice(3)}g`, // non-hex raw
      `0x${raw.slice(2, 42)}`,
      ` ${raw}`,
    ]) {
      expect(reasonOf("TON", bad)).toBe(reason);
    }
  });

  test("a string mixing base64 and base64url is refused", () => {
    expect(reasonOf("TON", forms.bounceable.replace("_", "/"))).toBe("is not a valid TON address: it mixes base64 and base64url");
  });

  test("every account round-trips through all its forms (property)", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.constantFrom(0, -1),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        (hash, wc, bounceable, testOnly, urlSafe) => {
          const a = new Address(wc, Buffer.from(hash));
          const expected = ok(a.toRawString());
          const friendly = a.toString({ bounceable, testOnly, urlSafe });
          // A signing wallet may be on either chain; an address a loan or wallet names, on the basechain only.
          expect(tonAccountAddress(friendly)).toEqual(expected);
          expect(tonAccountAddress(a.toRawString())).toEqual(expected);
          if (wc === 0) {
            expect(canonicalAddress("TON", friendly)).toEqual(expected);
            expect(canonicalAddress("TON_TESTNET", a.toRawString())).toEqual(expected);
          } else {
            expect(canonicalAddress("TON", friendly)).toEqual({ ok: false, reason: "must be on TON workchain 0" });
            expect(canonicalAddress("TON_TESTNET", a.toRawString())).toEqual({ ok: false, reason: "must be on TON workchain 0" });
          }
        },
      ),
    );
  });
});

describe("canonicalAddress on SOLANA_DEVNET", () => {
  test("real addresses are accepted as given", () => {
    for (const a of [
      "11111111111111111111111111111111", // the system program: 32 zero bytes
      "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", // SPL token program, 43 characters
      "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU", // devnet USDC mint, 44 characters
      "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", // mainnet USDC mint
    ]) {
      expect(canonicalAddress("SOLANA_DEVNET", a)).toEqual(ok(a));
    }
  });

  test("characters outside the base58 alphabet are refused", () => {
    const good = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU";
    for (const c of ["0", "O", "I", "l", "+", "/", " ", "é"]) {
      expect(reasonOf("SOLANA_DEVNET", c + good.slice(1))).toBe("must be base58 (digits and letters except 0, O, I and l)");
    }
  });

  test("wrong lengths are refused", () => {
    const good = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU";
    expect(reasonOf("SOLANA_DEVNET", "")).toBe("must be a base58 Solana address of 32 to 44 characters");
    expect(reasonOf("SOLANA_DEVNET", "1".repeat(31))).toBe("must be a base58 Solana address of 32 to 44 characters");
    expect(reasonOf("SOLANA_DEVNET", `${good}1`)).toBe("must be a base58 Solana address of 32 to 44 characters");
    // In range by length, wrong by bytes: 33 zero bytes, 2^256 and above, under 32 bytes.
    expect(reasonOf("SOLANA_DEVNET", "1".repeat(33))).toBe("must be base58 that decodes to 32 bytes");
    expect(reasonOf("SOLANA_DEVNET", "z".repeat(44))).toBe("must be base58 that decodes to 32 bytes");
    expect(reasonOf("SOLANA_DEVNET", "2".repeat(34))).toBe("must be base58 that decodes to 32 bytes");
  });

  test("EVM and TON addresses are not Solana addresses", () => {
    expect(canonicalAddress("SOLANA_DEVNET", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed").ok).toBe(false);
    expect(canonicalAddress("SOLANA_DEVNET", "EQDtFpEwcFAEcRe5mLVh2N6C0x-_hJEM7W61_JLnSF74p4q2").ok).toBe(false);
  });

  test("every 32-byte key round-trips (property)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (bytes) => {
        const s = encodeBase58(bytes);
        expect(canonicalAddress("SOLANA_DEVNET", s)).toEqual(ok(s));
      }),
    );
  });
});

describe("base58", () => {
  test("known vectors", () => {
    expect(encodeBase58(new Uint8Array([]))).toBe("");
    expect(encodeBase58(new Uint8Array([0, 0]))).toBe("11");
    expect(encodeBase58(new TextEncoder().encode("Hello World!"))).toBe("2NEpo7TZRRrLZSi2U");
    expect(encodeBase58(new Uint8Array([0, 0, 0x28, 0x7f, 0xb4, 0xcd]))).toBe("11233QC4");
    expect(decodeBase58("2NEpo7TZRRrLZSi2U")).toEqual(new TextEncoder().encode("Hello World!"));
    expect(decodeBase58("11233QC4")).toEqual(new Uint8Array([0, 0, 0x28, 0x7f, 0xb4, 0xcd]));
    expect(decodeBase58("0")).toBeNull();
  });

  test("decode inverts encode for any bytes (property)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
        expect(decodeBase58(encodeBase58(bytes))).toEqual(bytes);
      }),
    );
  });
});

test("every chain has an address rule", () => {
  for (const chain of CHAINS) {
    const r = canonicalAddress(chain, "not an address");
    expect(r.ok).toBe(false);
  }
});

/** CRC16/XMODEM as TON friendly addresses use it; lets a test forge a well-formed address with a bad tag. */
function crcOf(data: Uint8Array): { crc16: Uint8Array } {
  let crc = 0;
  for (const byte of data) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return { crc16: new Uint8Array([crc >> 8, crc & 0xff]) };
}
