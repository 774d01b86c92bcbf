import { originProblem } from "../../../shared/domain/origins.ts";

/**
 * Security headers of every widget page (issue 6, item 7): framed only by the
 * program's allowed origins (`frame-ancestors`; none allowed: `'none'`),
 * scripts only with this response's nonce, nothing inline otherwise, no
 * plugins, forms and base URI kept to ourselves.
 */
export function pageSecurityHeaders(input: { nonce: string; frameAncestors: string[]; connectSrc?: string[] }): Record<string, string> {
  // Only what is an origin today: an entry saved before the host rule (`https://a.com;sandbox`) would add a directive.
  const frameAncestors = input.frameAncestors.filter((origin) => originProblem(origin) === null);
  const ancestors = frameAncestors.length > 0 ? frameAncestors.join(" ") : "'none'";
  const csp = [
    "default-src 'self'",
    `script-src 'nonce-${input.nonce}' 'strict-dynamic'`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' https: data:",
    `connect-src 'self' ${(input.connectSrc ?? []).join(" ")}`.trim(),
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    `frame-ancestors ${ancestors}`,
  ].join("; ");
  return {
    "content-security-policy": csp,
    "x-content-type-options": "nosniff",
    "referrer-policy": "strict-origin-when-cross-origin",
    "cross-origin-opener-policy": "same-origin-allow-popups",
  };
}

/** A fresh nonce per response. */
export const newNonce = (): string => btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))));
