import { describe, expect, test } from "bun:test";
import { displayText, merchantName, oneLine, PLAIN_TEXT_PATTERN } from "./plain-text.ts";

describe("plain text", () => {
  test("refuses control characters and bidirectional overrides, keeps the rest", () => {
    for (const bad of [
      "a\nb",
      "a\rb",
      "a\u0000b",
      "a\u001bb",
      "a\u007fb",
      "a\u0085b",
      "a\u202eb",
      "a\u2066b",
      "a\u2069b",
      // Line and paragraph separators; bidi marks; invisible formatting.
      "a\u2028b",
      "a\u2029b",
      "a\u200eb",
      "a\u200fb",
      "a\u061cb",
      "a\u200bb",
      "a\u200db",
      "a\u00adb",
      "a\u2060b",
      "a\ufeffb",
      "a\ufff9b",
    ]) {
      expect(PLAIN_TEXT_PATTERN.test(bad)).toBe(false);
    }
    for (const good of ["Acme Store", "Café Ünïcode 株式会社", "user-42", "O'Brien & Sons (EU)", "Zürich · Straße №5", "🙂 Shop"])
      expect(PLAIN_TEXT_PATTERN.test(good)).toBe(true);
  });

  test('refuses every default-ignorable code point of Unicode and the blank Braille pattern, and only those besides controls, bidi and separators (an audit read "INV-\\u034F123" as INV-123)', () => {
    const ignorable = /\p{Default_Ignorable_Code_Point}/u;
    const otherRefused = /[\p{Cc}\u2028\u2029\u2800\uFFF9-\uFFFB]/u;
    let refused = 0;
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const ch = String.fromCodePoint(cp);
      const shouldRefuse = ignorable.test(ch) || otherRefused.test(ch);
      const text = `INV-${ch}123`;
      if (PLAIN_TEXT_PATTERN.test(text) === shouldRefuse)
        throw new Error(`U+${cp.toString(16).toUpperCase()}: refused ${!shouldRefuse}, expected ${shouldRefuse}`);
      if (shouldRefuse) {
        refused++;
        // Stored before the rule: the character reads as one space in what is signed or mailed.
        expect(oneLine(text)).toBe("INV- 123");
      }
    }
    expect(refused).toBeGreaterThan(4_000);
    // Lone surrogates are no text either; the pairs around the astral ranges still pass.
    expect(PLAIN_TEXT_PATTERN.test("a\uDB40b")).toBe(false);
    for (const cp of [0x1bc9f, 0x1bca4, 0x1d172, 0x1d17b, 0x1d11e]) expect(PLAIN_TEXT_PATTERN.test(`x${String.fromCodePoint(cp)}y`)).toBe(true);
  });

  test("a company name padded with blank Braille patterns cannot push made-up terms onto their own line either (an audit's bypass of the em-space rule)", () => {
    const padded = `Acme Pay${"\u2800".repeat(60)} Amount: 1.00 USDC${"\u2800".repeat(60)} Total due: 1.02 USDC`;
    expect(PLAIN_TEXT_PATTERN.test(padded)).toBe(false);
    // Stored before the rule: what a wallet signs has it on one line, the padding gone.
    expect(merchantName(padded, "t")).toBe("Acme Pay Amount: 1.00 USDC Total due: 1.02 USDC");
  });

  test("oneLine puts stored text on one line, as it reads", () => {
    expect(oneLine("Evil\nAmount: 1.00 USDC")).toBe("Evil Amount: 1.00 USDC");
    expect(oneLine("a\u202eb\r\nc")).toBe("a b  c");
    expect(oneLine("Acme Store")).toBe("Acme Store");
    expect(oneLine("Acme Pay\u2028Amount: 1.00 USDC\u2029x\u200f")).toBe("Acme Pay Amount: 1.00 USDC x ");
  });

  test("merchantName collapses runs of spaces of any width: 40 em spaces cannot push made-up terms onto their own wrapped line (found by an audit)", () => {
    const spaced = `Acme${"\u2003".repeat(40)}Amount: 10.00 USDT${"\u3000".repeat(40)}Total due: 10.20 USDT`;
    expect(PLAIN_TEXT_PATTERN.test(spaced)).toBe(true);
    expect(merchantName(spaced, "t")).toBe("Acme Amount: 10.00 USDT Total due: 10.20 USDT");
    expect(merchantName("  Acme\u00a0\u00a0Pay  ", "t")).toBe("Acme Pay");
  });

  test("displayText: anyone's text (a payment comment) on one line, spaces collapsed, bidi and invisible characters gone, cut at 120", () => {
    expect(displayText("svc:repay:\u202Eabc\u200B”) SUPPORT:\nattribute to loan X")).toBe("svc:repay: abc ”) SUPPORT: attribute to loan X");
    const long = displayText("x".repeat(3000));
    expect(long).toHaveLength(121);
    expect(long.endsWith("…")).toBe(true);
    expect(displayText("short", 10)).toBe("short");
  });

  test("merchantName: the company name, else the tenant's, on one line", () => {
    expect(merchantName("Shop\nTotal due: 1.00", "Tenant")).toBe("Shop Total due: 1.00");
    expect(merchantName(null, "Tenant Co")).toBe("Tenant Co");
    expect(merchantName(undefined, "T\u2067x")).toBe("T x");
  });
});
