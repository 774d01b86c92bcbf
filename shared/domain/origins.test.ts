import { describe, expect, test } from "bun:test";
import { allowedOriginsProblems, checkAllowedOrigins, isOriginAllowed, MAX_ALLOWED_ORIGINS, MAX_ORIGIN_LENGTH, originProblem } from "./origins.ts";

describe("originProblem", () => {
  test.each([
    "https://shop.example.com",
    "https://example.com",
    "https://shop.example.com:8443",
    "https://a.b.c.example.co.uk",
    "https://1.2.3.4",
    "https://[::1]",
    "https://localhost",
    "https://localhost:3000",
    "https://xn--bcher-kva.de",
    "https://my_shop.example.com",
    "http://localhost",
    "http://localhost:3000",
    "http://127.0.0.1",
    "http://127.0.0.1:5173",
  ])("accepts %s", (origin) => {
    expect(originProblem(origin)).toBeNull();
  });

  test.each([
    ["", "must not be empty"],
    ["shop.example.com", "is not a URL"],
    ["null", "is not a URL"],
    ["https://", "is not a URL"],
    ["https://exa mple.com", "is not a URL"],
    ["https://example.com:65536", "is not a URL"],
    ["http://shop.example.com", "must use https"],
    ["http://localhost.evil.com", "must use https"],
    ["http://127.0.0.2", "must use https"],
    ["http://[::1]:3000", "must use https"],
    ["ftp://example.com", "must use https"],
    ["javascript:alert(1)", "must use https"],
    ["data:text/html,hi", "must use https"],
    ["file:///etc/passwd", "must use https"],
    ["ws://localhost:3000", "must use https"],
    ["https://*.example.com", "wildcards are not allowed"],
    ["*", "wildcards are not allowed"],
    ["https://user:pass@example.com", "must not contain credentials"],
    ["https://user@example.com", "must not contain credentials"],
    ["https://example.com:0", "port 0"],
    ["https://example.com/", "must be an exact origin"],
    ["https://example.com/path", "must be an exact origin"],
    ["https://example.com?q=1", "must be an exact origin"],
    ["https://example.com#frag", "must be an exact origin"],
    ["https://Example.com", "must be an exact origin"],
    ["HTTPS://example.com", "must be an exact origin"],
    ["https://example.com:443", "must be an exact origin"],
    ["http://localhost:80", "must be an exact origin"],
    ["https://bücher.de", "must be an exact origin"],
    [" https://example.com", "must be an exact origin"],
    ["https://example.com\t", "must be an exact origin"],
    ["https:example.com", "must be an exact origin"],
    // Found by an audit: the URL parser keeps these in a host, and they went into the widget pages' CSP header.
    ["https://a.com;sandbox", "host must be a DNS name"],
    ["https://x.com;script-src", "host must be a DNS name"],
    ["https://a,b.com", "host must be a DNS name"],
    ['https://q"x.com', "host must be a DNS name"],
    ["https://q'x.com", "host must be a DNS name"],
    ["https://-a.com", "host must be a DNS name"],
    ["https://a..com", "host must be a DNS name"],
  ])("rejects %p (%s)", (origin, reason) => {
    expect(originProblem(origin)).toContain(reason);
  });

  test("suggests the normalized origin", () => {
    expect(originProblem("https://Shop.Example.com:443/")).toContain("did you mean https://shop.example.com?");
  });

  test("bounds the length", () => {
    const host = `${"a".repeat(60)}.`.repeat(4) + "com"; // 247 characters: a valid hostname
    expect(originProblem(`https://${host}`)).toBeNull();
    expect(originProblem(`https://${"a".repeat(MAX_ORIGIN_LENGTH)}.com`)).toContain(`at most ${MAX_ORIGIN_LENGTH}`);
  });
});

describe("allowedOriginsProblems / checkAllowedOrigins", () => {
  test("an empty list and a list of distinct valid origins have no problems", () => {
    expect(allowedOriginsProblems([])).toEqual([]);
    expect(checkAllowedOrigins(["https://a.example", "https://b.example", "http://localhost:3000"])).toEqual([]);
  });

  test("names each bad entry by its index", () => {
    const problems = allowedOriginsProblems(["https://ok.example", "https://bad.example/", "http://x.example"]);
    expect(problems.map((p) => p.index)).toEqual([1, 2]);
    const errors = checkAllowedOrigins(["https://ok.example", "https://bad.example/", "http://x.example"]);
    expect(errors).toHaveLength(2);
    expect(errors[0]).toStartWith("allowedOrigins.1: must be an exact origin");
    expect(errors[1]).toStartWith("allowedOrigins.2: must use https");
  });

  test("rejects repeats, naming the repeat and the first occurrence", () => {
    expect(checkAllowedOrigins(["https://a.example", "https://b.example", "https://a.example", "https://a.example"])).toEqual([
      "allowedOrigins.2: repeats allowedOrigins.0",
      "allowedOrigins.3: repeats allowedOrigins.0",
    ]);
  });

  test("an invalid entry is not also reported as a repeat", () => {
    expect(checkAllowedOrigins(["https://a.example/", "https://a.example/"])).toHaveLength(2);
    expect(checkAllowedOrigins(["https://a.example/", "https://a.example/"]).every((e) => e.includes("exact origin"))).toBe(true);
  });

  test(`at most ${MAX_ALLOWED_ORIGINS} origins`, () => {
    const list = (n: number) => Array.from({ length: n }, (_, i) => `https://shop${i}.example`);
    expect(checkAllowedOrigins(list(MAX_ALLOWED_ORIGINS))).toEqual([]);
    expect(checkAllowedOrigins(list(MAX_ALLOWED_ORIGINS + 1))).toEqual([`allowedOrigins: at most ${MAX_ALLOWED_ORIGINS} origins`]);
  });
});

describe("isOriginAllowed", () => {
  const allowed = ["https://shop.example.com", "http://localhost:3000"];
  test("matches exactly", () => {
    expect(isOriginAllowed("https://shop.example.com", allowed)).toBe(true);
    expect(isOriginAllowed("http://localhost:3000", allowed)).toBe(true);
  });
  test.each([
    [undefined],
    [null],
    [""],
    ["null"],
    ["https://shop.example.com/"],
    ["https://SHOP.example.com"],
    ["https://evil.shop.example.com"],
    ["https://shop.example.com.evil.com"],
    ["http://shop.example.com"],
    ["http://localhost:3001"],
    ["https://shop.example.com:443"],
  ])("refuses %p", (origin) => {
    expect(isOriginAllowed(origin, allowed)).toBe(false);
  });
  test("nothing matches an empty list", () => {
    expect(isOriginAllowed("https://shop.example.com", [])).toBe(false);
  });
});
