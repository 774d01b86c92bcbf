import { describe, expect, test } from "bun:test";
import { merchantName, oneLine, PLAIN_TEXT_PATTERN } from "./plain-text.ts";

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

  test("oneLine puts stored text on one line, as it reads", () => {
    expect(oneLine("Evil\nAmount: 1.00 USDC")).toBe("Evil Amount: 1.00 USDC");
    expect(oneLine("a\u202eb\r\nc")).toBe("a b  c");
    expect(oneLine("Acme Store")).toBe("Acme Store");
    expect(oneLine("Acme Pay\u2028Amount: 1.00 USDC\u2029x\u200f")).toBe("Acme Pay Amount: 1.00 USDC x ");
  });

  test("merchantName: the company name, else the tenant's, on one line", () => {
    expect(merchantName("Shop\nTotal due: 1.00", "Tenant")).toBe("Shop Total due: 1.00");
    expect(merchantName(null, "Tenant Co")).toBe("Tenant Co");
    expect(merchantName(undefined, "T\u2067x")).toBe("T x");
  });
});
