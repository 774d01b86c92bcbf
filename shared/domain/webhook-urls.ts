/**
 * Which URLs may receive webhooks (DECISIONS.md "Webhooks, notifications").
 * Deployed environments POST only to public https hosts, so a merchant cannot
 * aim our deliveries at our own network (SSRF). Local runs (`npm run dev`,
 * tests) also accept `http://127.0.0.1:<port>` and `http://localhost:<port>`.
 *
 * This judges the URL as written. A public name that resolves to a private
 * address (DNS rebinding, `127.0.0.1.nip.io`) cannot be caught here; it is
 * the runtime's fetch that must refuse private destinations.
 */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

export type WebhookEnvironment = "development" | "production";

/** The two hosts local runs may also call, over http or https. */
const LOCAL_DEV_HOSTS = new Set(["127.0.0.1", "localhost"]);

/** Names that never leave the machine or the site (RFC 6761, 6762, 8375; `.internal` as cloud providers use it). */
const LOCAL_SUFFIXES = [".localhost", ".local", ".internal", ".localdomain", ".home.arpa"];

/** [first address, prefix length] of every IPv4 range that is not the public internet. */
const PRIVATE_IPV4: [string, number][] = [
  ["0.0.0.0", 8], // "this network", 0.0.0.0 included
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, cloud metadata (169.254.169.254)
  ["172.16.0.0", 12],
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.168.0.0", 16],
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, 255.255.255.255 included
];

const ipv4ToNumber = (ip: string): number => ip.split(".").reduce((n, part) => n * 256 + Number(part), 0);

const PRIVATE_IPV4_RANGES = PRIVATE_IPV4.map(([base, bits]) => {
  const size = 2 ** (32 - bits);
  const start = ipv4ToNumber(base);
  return { start, end: start + size - 1 };
});

/** Whether a 32-bit IPv4 address (as a number) is outside the public internet. */
export function isPrivateIpv4(address: number): boolean {
  return PRIVATE_IPV4_RANGES.some((r) => address >= r.start && address <= r.end);
}

const CANONICAL_IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/**
 * The eight 16-bit groups of an IPv6 address (without brackets), or null.
 * Accepts `::` compression and a dotted IPv4 tail.
 */
export function parseIpv6(text: string): number[] | null {
  let s = text.toLowerCase();
  const tail: number[] = [];
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (dotted) {
    if (!CANONICAL_IPV4.test(dotted[2]!)) return null;
    const n = ipv4ToNumber(dotted[2]!);
    tail.push(Math.floor(n / 65536), n % 65536);
    s = dotted[1]!.endsWith("::") ? dotted[1]! : dotted[1]!.slice(0, -1);
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const groups = (part: string) => (part === "" ? [] : part.split(":"));
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  if (![...head, ...rest].every((g) => /^[0-9a-f]{1,4}$/.test(g))) return null;
  const explicit = head.length + rest.length + tail.length;
  if (halves.length === 1 ? explicit !== 8 : explicit > 7) return null;
  const zeros = new Array<number>(8 - explicit).fill(0);
  return [...head.map((g) => parseInt(g, 16)), ...zeros, ...rest.map((g) => parseInt(g, 16)), ...tail];
}

const embeddedIpv4 = (hi: number, lo: number) => hi * 65536 + lo;

/**
 * Whether an IPv6 address is outside the public internet. Addresses that
 * carry an IPv4 address (mapped, compatible, translated, NAT64, 6to4) are
 * judged by that IPv4 address, so `::ffff:127.0.0.1` is as private as
 * `127.0.0.1`.
 */
export function isPrivateIpv6(g: number[]): boolean {
  const [a, b, c, d, e, f, h1, h2] = g as [number, number, number, number, number, number, number, number];
  const zeroTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  // ::/96 (unspecified, loopback, IPv4-compatible), ::ffff:0:0/96 (mapped), ::ffff:0:0:0/96 (translated).
  if (zeroTo(5) && (f === 0 || f === 0xffff)) return isPrivateIpv4(embeddedIpv4(h1, h2));
  if (zeroTo(4) && e === 0xffff && f === 0) return isPrivateIpv4(embeddedIpv4(h1, h2));
  // 64:ff9b::/96: well-known NAT64 prefix.
  if (a === 0x64 && b === 0xff9b && c === 0 && d === 0 && e === 0 && f === 0) return isPrivateIpv4(embeddedIpv4(h1, h2));
  if (a === 0x64 && b === 0xff9b && c === 1) return true; // 64:ff9b:1::/48, local-use NAT64
  if (a === 0x2002) return isPrivateIpv4(embeddedIpv4(b, c)); // 6to4
  if (a === 0x2001 && b === 0) return true; // Teredo: the IPv4 server and client are hidden in it
  if (a === 0x2001 && b === 0x0db8) return true; // documentation
  if (a === 0x0100 && b === 0 && c === 0 && d === 0) return true; // 100::/64, discard-only
  if ((a & 0xfe00) === 0xfc00) return true; // fc00::/7, unique local
  if ((a & 0xffc0) === 0xfe80) return true; // fe80::/10, link-local
  if ((a & 0xffc0) === 0xfec0) return true; // fec0::/10, deprecated site-local
  if ((a & 0xff00) === 0xff00) return true; // ff00::/8, multicast
  return false;
}

/**
 * Why `url` may not receive webhooks in `environment`, as the end of a
 * sentence about the field (`url: <problem>`), or null when it may.
 *
 * @example webhookUrlProblem("https://hooks.example.com/svc", "production") // null
 * @example webhookUrlProblem("http://2130706433/", "production") // "must use https"
 * @example webhookUrlProblem("https://10.0.0.7/", "production") // "must not point to a private, loopback, link-local or reserved address"
 */
export function webhookUrlProblem(url: string, environment: WebhookEnvironment): string | null {
  if (url.length > MAX_WEBHOOK_URL_LENGTH) return `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "must be an absolute URL";
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return "must use https";
  if (parsed.username || parsed.password) return "must not contain credentials";

  // `new URL` has already turned decimal, hex and octal IPv4 forms into dotted quads.
  const host = parsed.hostname;
  if (environment === "development" && LOCAL_DEV_HOSTS.has(host)) return null;
  if (parsed.protocol !== "https:") return "must use https";
  return hostProblem(host);
}

const PRIVATE_ADDRESS = "must not point to a private, loopback, link-local or reserved address";

function hostProblem(host: string): string | null {
  if (host.startsWith("[")) {
    const groups = parseIpv6(host.slice(1, -1));
    if (!groups) return "must have a valid host";
    return isPrivateIpv6(groups) ? PRIVATE_ADDRESS : null;
  }
  if (CANONICAL_IPV4.test(host)) return isPrivateIpv4(ipv4ToNumber(host)) ? PRIVATE_ADDRESS : null;

  const name = host.endsWith(".") ? host.slice(0, -1) : host;
  const labels = name.split(".");
  if (labels.some((l) => l === "")) return "must have a valid host";
  // A numeric last label makes the host an IPv4 address in the URL standard;
  // one that reaches here was not normalized, so it is refused rather than guessed.
  if (/^(0x[0-9a-f]*|\d+)$/i.test(labels[labels.length - 1]!)) return "must have a valid host";
  if (name === "localhost" || LOCAL_SUFFIXES.some((s) => name.endsWith(s))) return "must be a public host, not a local name";
  if (labels.length < 2) return "must be a public host with a domain name (a single-label host is local)";
  return null;
}
