import { describe, expect, test } from "bun:test";
import { checkBranding, httpsUrlProblem, isHexColor, MAX_URL_LENGTH, type Branding } from "./branding.ts";

describe("httpsUrlProblem", () => {
  test.each([
    "https://cdn.example.com/logo.png",
    "https://example.com",
    "https://example.com/",
    "https://example.com:8443/terms?lang=en#section-2",
    "https://example.com/a%20b.png",
    "https://xn--bcher-kva.de/logo.svg",
    "https://bücher.de/logo.svg",
    "https://1.2.3.4/logo.png",
    "HTTPS://EXAMPLE.COM/Logo.PNG",
  ])("accepts %s", (url) => {
    expect(httpsUrlProblem(url)).toBeNull();
  });

  test.each([
    ["", "must not be empty"],
    ["javascript:alert(1)", "must be an https URL"],
    ["JavaScript:alert(document.cookie)", "must be an https URL"],
    ["data:image/png;base64,iVBORw0KGgo=", "must be an https URL"],
    ["data:text/html,<script>alert(1)</script>", "must be an https URL"],
    ["http://example.com/logo.png", "must be an https URL"],
    ["ftp://example.com/logo.png", "must be an https URL"],
    ["file:///etc/passwd", "must be an https URL"],
    ["vbscript:msgbox", "must be an https URL"],
    ["blob:https://example.com/uuid", "must be an https URL"],
    ["//example.com/logo.png", "is not a valid URL"],
    ["/logo.png", "is not a valid URL"],
    ["logo.png", "is not a valid URL"],
    ["https://", "is not a valid URL"],
    ["https://exa%mple.com", "is not a valid URL"],
    [" https://example.com", "spaces or control characters"],
    ["https://example.com/logo.png ", "spaces or control characters"],
    ["https://example.com/a b.png", "spaces or control characters"],
    ["java\tscript:alert(1)", "spaces or control characters"],
    ["https://example.com/\nx", "spaces or control characters"],
    ["https://example.com/\u0000", "spaces or control characters"],
    ["https://user:pass@example.com/logo.png", "must not contain credentials"],
    ["https://user@example.com/logo.png", "must not contain credentials"],
  ])("rejects %p (%s)", (url, reason) => {
    expect(httpsUrlProblem(url)).toContain(reason);
  });

  test(`at most ${MAX_URL_LENGTH} characters`, () => {
    const base = "https://example.com/";
    expect(httpsUrlProblem(base + "a".repeat(MAX_URL_LENGTH - base.length))).toBeNull();
    expect(httpsUrlProblem(base + "a".repeat(MAX_URL_LENGTH - base.length + 1))).toBe(`must be at most ${MAX_URL_LENGTH} characters`);
  });
});

describe("isHexColor", () => {
  test.each(["#000000", "#FFFFFF", "#ffffff", "#1A2b3C", "#0a0B0c"])("accepts %s", (c) => {
    expect(isHexColor(c)).toBe(true);
  });
  test.each([
    "red",
    "#fff",
    "#FFF",
    "#GGGGGG",
    "#12345",
    "#1234567",
    "#12345678",
    "123456",
    "##123456",
    " #123456",
    "#123456 ",
    "#123456\n",
    "rgb(0,0,0)",
    "0x123456",
    "",
    "#",
  ])("rejects %p", (c) => {
    expect(isHexColor(c)).toBe(false);
  });
});

describe("checkBranding", () => {
  const valid: Branding = {
    companyName: "Acme",
    logoUrl: "https://cdn.acme.example/logo.png",
    primaryColor: "#1A2B3C",
    supportEmail: "help@acme.example",
    termsUrl: "https://acme.example/terms",
  };
  test("valid branding, and branding with every optional field cleared", () => {
    expect(checkBranding(valid)).toEqual([]);
    expect(checkBranding({ companyName: "Acme", logoUrl: null, primaryColor: null, supportEmail: null, termsUrl: null })).toEqual([]);
  });
  test("names every bad field", () => {
    expect(checkBranding({ ...valid, companyName: "  ", logoUrl: "javascript:alert(1)", primaryColor: "red", termsUrl: "http://acme.example" })).toEqual([
      "branding.companyName: must not be empty",
      "branding.logoUrl: must be an https URL",
      "branding.termsUrl: must be an https URL",
      "branding.primaryColor: must be a hex color #RRGGBB, like #1A2B3C",
    ]);
  });
  test("company name 1..200 characters", () => {
    expect(checkBranding({ ...valid, companyName: "x".repeat(200) })).toEqual([]);
    expect(checkBranding({ ...valid, companyName: "x".repeat(201) })).toEqual(["branding.companyName: must be at most 200 characters"]);
  });
});
