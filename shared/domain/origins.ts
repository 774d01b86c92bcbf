/**
 * Allowed origins of a widget program (DECISIONS.md "Embed and widget"): the
 * browser origins that may frame the widget and call its embed endpoints.
 * Matching is exact string equality with the browser's `Origin` header, so an
 * entry is only accepted in the exact form a browser sends.
 */
export const MAX_ALLOWED_ORIGINS = 20;
/** A hostname has at most 253 characters; scheme and port add a few. */
export const MAX_ORIGIN_LENGTH = 300;

/** A DNS name in ASCII (IDNs as punycode, as the URL parser gives them; underscores, which some hosts have) or an IP address, v6 in brackets. */
const HOSTNAME = /^(?:[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*|\[[0-9a-f:.]+\])$/;

/** Plain http is allowed only for local development, on these hosts. */
const LOCAL_DEV_HOSTS: readonly string[] = ["localhost", "127.0.0.1"];

/**
 * Why `value` is not an origin a widget program may allow, or null when it is.
 * Accepted: `https://host[:port]`, and `http://localhost[:port]` or
 * `http://127.0.0.1[:port]` for local development; exactly as the browser's
 * `Origin` header spells it (lowercase host, no default port, no path, query,
 * fragment, trailing slash, credentials or wildcard).
 *
 * @example originProblem("https://shop.example.com") // null
 * @example originProblem("https://shop.example.com/") // "must be an exact origin …"
 */
export function originProblem(value: string): string | null {
  if (value.length === 0) return "must not be empty";
  if (value.length > MAX_ORIGIN_LENGTH) return `must be at most ${MAX_ORIGIN_LENGTH} characters`;
  // `new URL` accepts `*` in hosts; a browser never sends one, and a wildcard would widen the grant.
  if (value.includes("*")) return "wildcards are not allowed; list each origin exactly";
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "is not a URL; expected an origin like https://shop.example.com";
  }
  const local = url.protocol === "http:" && LOCAL_DEV_HOSTS.includes(url.hostname);
  if (url.protocol !== "https:" && !local) {
    return "must use https (plain http only for http://localhost and http://127.0.0.1)";
  }
  if (url.username !== "" || url.password !== "") return "must not contain credentials";
  if (url.port === "0") return "port 0 is not a valid port";
  // The URL parser keeps `;`, `,`, quotes and more in a host; no browser sends such an Origin, and the origins go into
  // the widget pages' Content-Security-Policy (frame-ancestors), where `;` would start a directive of its own.
  if (!HOSTNAME.test(url.hostname))
    return "host must be a DNS name (letters, digits, hyphens, underscores and dots; punycode for other scripts) or an IP address";
  if (url.origin !== value) {
    return `must be an exact origin like https://shop.example.com (lowercase host, no path, query, trailing slash or default port); did you mean ${url.origin}?`;
  }
  return null;
}

/**
 * The problems of a list of origins, each with the index of the entry it is
 * about: invalid entries, and repeats of an earlier entry (rejected rather
 * than silently dropped, so a saved list is exactly what was sent). The
 * length limit is checked by the caller (`MAX_ALLOWED_ORIGINS`).
 */
export function allowedOriginsProblems(origins: readonly string[]): { index: number; message: string }[] {
  const problems: { index: number; message: string }[] = [];
  const firstIndex = new Map<string, number>();
  origins.forEach((origin, index) => {
    const problem = originProblem(origin);
    if (problem) {
      problems.push({ index, message: problem });
      return;
    }
    const first = firstIndex.get(origin);
    if (first === undefined) firstIndex.set(origin, index);
    else problems.push({ index, message: `repeats allowedOrigins.${first}` });
  });
  return problems;
}

/**
 * The same checks as one message per bad field, each starting with its path
 * (`allowedOrigins.2: …`), as `validationError` takes them.
 */
export function checkAllowedOrigins(origins: readonly string[]): string[] {
  const errors: string[] = [];
  if (origins.length > MAX_ALLOWED_ORIGINS) errors.push(`allowedOrigins: at most ${MAX_ALLOWED_ORIGINS} origins`);
  for (const p of allowedOriginsProblems(origins)) errors.push(`allowedOrigins.${p.index}: ${p.message}`);
  return errors;
}

/**
 * Whether a browser's `Origin` header is one of the program's allowed origins.
 * A missing header or the opaque `null` origin never matches.
 */
export function isOriginAllowed(origin: string | null | undefined, allowedOrigins: readonly string[]): boolean {
  if (!origin || origin === "null") return false;
  return allowedOrigins.includes(origin);
}
