import { describe, expect, test } from "bun:test";
import { isPrivateIpv4, isPrivateIpv6, MAX_WEBHOOK_URL_LENGTH, parseIpv6, webhookUrlProblem } from "./webhook-urls.ts";

const PRIVATE = "must not point to a private, loopback, link-local or reserved address";
const HTTPS = "must use https";
const LOCAL_NAME = "must be a public host, not a local name";

const v4 = (s: string) => s.split(".").reduce((n, p) => n * 256 + Number(p), 0);

describe("webhookUrlProblem: accepted in production", () => {
  test.each([
    "https://hooks.example.com/svc",
    "https://example.com",
    "https://EXAMPLE.com/Path?q=1#frag",
    "https://hooks.example.com:8443/svc",
    "https://hooks.example.com./svc", // the absolute form of a public name
    "https://例え.jp/hook", // IDN, punycoded by the parser
    "https://8.8.8.8/hook",
    "https://1.1.1.1:444/",
    "https://100.63.255.255/", // just below CGNAT
    "https://100.128.0.0/", // just above CGNAT
    "https://172.15.255.255/", // just below 172.16/12
    "https://172.32.0.0/", // just above 172.16/12
    "https://192.0.1.255/",
    "https://192.169.0.1/",
    "https://198.17.255.255/",
    "https://198.20.0.0/",
    "https://223.255.255.255/", // just below multicast
    "https://11.0.0.1/",
    "https://126.255.255.255/",
    "https://128.0.0.1/",
    "https://169.253.255.255/",
    "https://[2606:4700:4700::1111]/hook",
    "https://[2001:4860:4860::8888]:8443/",
    "https://[::ffff:8.8.8.8]/", // mapped, judged by 8.8.8.8
    "https://[::ffff:808:808]/",
    "https://[64:ff9b::8.8.8.8]/",
    "https://[2002:808:808::1]/", // 6to4 of 8.8.8.8
    "https://[fbff::1]/", // just below fc00::/7
    "https://[fe00::1]/", // below fe80::/10
  ])("%s", (url) => {
    expect(webhookUrlProblem(url, "production")).toBeNull();
    expect(webhookUrlProblem(url, "development")).toBeNull();
  });

  test(`exactly ${MAX_WEBHOOK_URL_LENGTH} characters is accepted, one more is not`, () => {
    const base = "https://hooks.example.com/";
    const url = base + "a".repeat(MAX_WEBHOOK_URL_LENGTH - base.length);
    expect(url).toHaveLength(MAX_WEBHOOK_URL_LENGTH);
    expect(webhookUrlProblem(url, "production")).toBeNull();
    expect(webhookUrlProblem(url + "a", "production")).toBe("must be at most 2048 characters");
    expect(webhookUrlProblem(url + "a", "development")).toBe("must be at most 2048 characters");
  });
});

describe("webhookUrlProblem: refused in production", () => {
  test.each([
    // scheme
    ["http://hooks.example.com/svc", HTTPS],
    ["ftp://hooks.example.com/", HTTPS],
    ["file:///etc/passwd", HTTPS],
    ["javascript:alert(1)", HTTPS],
    ["data:text/plain,hi", HTTPS],
    ["ws://hooks.example.com/", HTTPS],
    ["wss://hooks.example.com/", HTTPS],
    // not a URL
    ["", "must be an absolute URL"],
    ["hooks.example.com/svc", "must be an absolute URL"],
    ["/v1/hook", "must be an absolute URL"],
    ["https://", "must be an absolute URL"],
    ["https://1.2.3.256/", "must be an absolute URL"],
    ["https://[fe80::1%25eth0]/", "must be an absolute URL"],
    ["https://exa mple.com/", "must be an absolute URL"],
    // credentials
    ["https://user:pass@hooks.example.com/", "must not contain credentials"],
    ["https://user@hooks.example.com/", "must not contain credentials"],
    ["https://:pass@hooks.example.com/", "must not contain credentials"],
    // IPv4 literals in every private or reserved range, at both ends
    ["https://0.0.0.0/", PRIVATE],
    ["https://0.255.255.255/", PRIVATE],
    ["https://10.0.0.1/", PRIVATE],
    ["https://10.255.255.255/", PRIVATE],
    ["https://100.64.0.0/", PRIVATE],
    ["https://100.127.255.255/", PRIVATE],
    ["https://127.0.0.1/", PRIVATE],
    ["https://127.255.255.254:8443/", PRIVATE],
    ["https://169.254.0.1/", PRIVATE],
    ["https://169.254.169.254/latest/meta-data/", PRIVATE],
    ["https://172.16.0.1/", PRIVATE],
    ["https://172.31.255.255/", PRIVATE],
    ["https://192.0.0.1/", PRIVATE],
    ["https://192.0.0.255/", PRIVATE],
    ["https://192.0.2.10/", PRIVATE],
    ["https://192.168.0.1/", PRIVATE],
    ["https://192.168.255.255/", PRIVATE],
    ["https://198.18.0.1/", PRIVATE],
    ["https://198.19.255.255/", PRIVATE],
    ["https://198.51.100.7/", PRIVATE],
    ["https://203.0.113.7/", PRIVATE],
    ["https://224.0.0.1/", PRIVATE],
    ["https://239.255.255.255/", PRIVATE],
    ["https://240.0.0.1/", PRIVATE],
    ["https://255.255.255.255/", PRIVATE],
    // other spellings of IPv4 that the URL parser normalizes
    ["https://2130706433/", PRIVATE], // decimal 127.0.0.1
    ["https://0x7f000001/", PRIVATE], // hex
    ["https://0x7f.0.0.1/", PRIVATE],
    ["https://0177.0.0.1/", PRIVATE], // octal
    ["https://127.1/", PRIVATE], // short form
    ["https://127.0.0.1./", PRIVATE], // trailing dot
    ["https://%31%32%37.0.0.1/", PRIVATE], // percent-encoded
    ["https://0/", PRIVATE], // 0.0.0.0
    ["https://167772161/", PRIVATE], // 10.0.0.1
    ["https://0xa9fea9fe/", PRIVATE], // 169.254.169.254
    ["https://3232235521/", PRIVATE], // 192.168.0.1
    // IPv6 literals
    ["https://[::]/", PRIVATE],
    ["https://[::1]/", PRIVATE],
    ["https://[0:0:0:0:0:0:0:1]:8443/", PRIVATE],
    ["https://[fc00::1]/", PRIVATE],
    ["https://[fd12:3456:789a::1]/", PRIVATE],
    ["https://[fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]/", PRIVATE],
    ["https://[fe80::1]/", PRIVATE],
    ["https://[febf::1]/", PRIVATE],
    ["https://[fec0::1]/", PRIVATE],
    ["https://[ff02::1]/", PRIVATE],
    ["https://[ff00::]/", PRIVATE],
    ["https://[2001:db8::1]/", PRIVATE],
    ["https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", PRIVATE], // Teredo
    ["https://[100::1]/", PRIVATE],
    // IPv6 addresses that carry a private IPv4 address
    ["https://[::ffff:127.0.0.1]/", PRIVATE],
    ["https://[::ffff:7f00:1]/", PRIVATE],
    ["https://[0:0:0:0:0:ffff:7f00:1]/", PRIVATE],
    ["https://[::ffff:10.0.0.1]/", PRIVATE],
    ["https://[::ffff:a9fe:a9fe]/", PRIVATE], // 169.254.169.254
    ["https://[::ffff:c0a8:1]/", PRIVATE], // 192.168.0.1
    ["https://[::127.0.0.1]/", PRIVATE], // IPv4-compatible
    ["https://[::7f00:1]/", PRIVATE],
    ["https://[::ffff:0:127.0.0.1]/", PRIVATE], // IPv4-translated
    ["https://[64:ff9b::127.0.0.1]/", PRIVATE], // NAT64
    ["https://[64:ff9b::a00:1]/", PRIVATE],
    ["https://[64:ff9b:1::808:808]/", PRIVATE], // local-use NAT64
    ["https://[2002:7f00:1::]/", PRIVATE], // 6to4 of 127.0.0.1
    ["https://[2002:c0a8:101::1]/", PRIVATE], // 6to4 of 192.168.1.1
    // local names
    ["https://localhost/", LOCAL_NAME],
    ["https://localhost:8443/", LOCAL_NAME],
    ["https://LOCALHOST/", LOCAL_NAME],
    ["https://localhost./", LOCAL_NAME],
    ["https://api.localhost/", LOCAL_NAME],
    ["https://printer.local/", LOCAL_NAME],
    ["https://metadata.google.internal/", LOCAL_NAME],
    ["https://db.svc.internal/", LOCAL_NAME],
    ["https://box.localdomain/", LOCAL_NAME],
    ["https://nas.home.arpa/", LOCAL_NAME],
    ["https://intranet/", "must be a public host with a domain name (a single-label host is local)"],
    ["https://com/", "must be a public host with a domain name (a single-label host is local)"],
    ["https://a..b/", "must have a valid host"],
  ])("%s: %s", (url, problem) => {
    expect(webhookUrlProblem(url, "production")).toBe(problem);
  });

  test("the names are matched as suffixes of labels, not of strings", () => {
    expect(webhookUrlProblem("https://notlocal/", "production")).not.toBe(LOCAL_NAME);
    expect(webhookUrlProblem("https://mylocalhost.com/", "production")).toBeNull();
    expect(webhookUrlProblem("https://local.example.com/", "production")).toBeNull();
    expect(webhookUrlProblem("https://internal.example.com/", "production")).toBeNull();
  });
});

describe("webhookUrlProblem: development", () => {
  test.each([
    "http://127.0.0.1:4000/hook",
    "http://127.0.0.1/hook",
    "https://127.0.0.1:4443/hook",
    "http://localhost:4000/hook",
    "http://LOCALHOST:4000/hook",
    "https://localhost:4443/",
    "http://2130706433:4000/", // the parser makes it 127.0.0.1
  ])("%s is accepted locally and refused in production", (url) => {
    expect(webhookUrlProblem(url, "development")).toBeNull();
    expect(webhookUrlProblem(url, "production")).not.toBeNull();
  });

  test.each([
    ["http://hooks.example.com/", HTTPS], // http to anything else still needs https
    ["http://10.0.0.1:4000/", HTTPS],
    ["https://10.0.0.1:4000/", PRIVATE],
    ["https://127.0.0.2/", PRIVATE], // only 127.0.0.1 itself
    ["https://[::1]:4000/", PRIVATE],
    ["https://api.localhost/", LOCAL_NAME],
    ["http://user:pass@127.0.0.1:4000/", "must not contain credentials"],
    ["ftp://127.0.0.1/", HTTPS],
  ])("%s is refused even locally: %s", (url, problem) => {
    expect(webhookUrlProblem(url, "development")).toBe(problem);
  });
});

describe("isPrivateIpv4", () => {
  test("the edges of every range", () => {
    const ranges: [string, string][] = [
      ["0.0.0.0", "0.255.255.255"],
      ["10.0.0.0", "10.255.255.255"],
      ["100.64.0.0", "100.127.255.255"],
      ["127.0.0.0", "127.255.255.255"],
      ["169.254.0.0", "169.254.255.255"],
      ["172.16.0.0", "172.31.255.255"],
      ["192.0.0.0", "192.0.0.255"],
      ["192.168.0.0", "192.168.255.255"],
      ["198.18.0.0", "198.19.255.255"],
      ["224.0.0.0", "255.255.255.255"],
    ];
    for (const [first, last] of ranges) {
      expect(isPrivateIpv4(v4(first))).toBe(true);
      expect(isPrivateIpv4(v4(last))).toBe(true);
    }
    for (const outside of [
      "1.0.0.0",
      "9.255.255.255",
      "11.0.0.0",
      "100.63.255.255",
      "100.128.0.0",
      "126.255.255.255",
      "128.0.0.0",
      "172.15.255.255",
      "172.32.0.0",
      "192.167.255.255",
      "192.169.0.0",
      "198.17.255.255",
      "198.20.0.0",
      "223.255.255.255",
    ]) {
      expect(isPrivateIpv4(v4(outside))).toBe(false);
    }
  });
});

describe("parseIpv6 and isPrivateIpv6", () => {
  test.each([
    ["::", [0, 0, 0, 0, 0, 0, 0, 0]],
    ["::1", [0, 0, 0, 0, 0, 0, 0, 1]],
    ["1::", [1, 0, 0, 0, 0, 0, 0, 0]],
    ["2001:db8::8:800:200c:417a", [0x2001, 0xdb8, 0, 0, 8, 0x800, 0x200c, 0x417a]],
    ["1:2:3:4:5:6:7:8", [1, 2, 3, 4, 5, 6, 7, 8]],
    ["::ffff:127.0.0.1", [0, 0, 0, 0, 0, 0xffff, 0x7f00, 1]],
    ["0:0:0:0:0:ffff:10.0.0.1", [0, 0, 0, 0, 0, 0xffff, 0x0a00, 1]],
    ["::FFFF:7F00:1", [0, 0, 0, 0, 0, 0xffff, 0x7f00, 1]],
  ])("%s parses", (text, groups) => {
    expect(parseIpv6(text)).toEqual(groups);
  });

  test.each(["", ":", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9", "1::2::3", "12345::", "g::", "::ffff:1.2.3.256", "1:2:3:4:5:6:7::8:9", "1:2:3:4:5:6:7:1.2.3.4"])(
    "%s does not parse",
    (text) => {
      expect(parseIpv6(text)).toBeNull();
    },
  );

  test("public addresses are public", () => {
    for (const a of ["2606:4700:4700::1111", "2001:4860:4860::8888", "::ffff:8.8.8.8", "64:ff9b::8.8.8.8", "2002:808:808::", "fe00::1", "fbff::1"]) {
      expect(isPrivateIpv6(parseIpv6(a)!)).toBe(false);
    }
  });
});
