/**
 * The small pages a verification link opens in a browser. Fixed text and the
 * token only (escaped); no scripts, so the CSP forbids them outright.
 */
const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

export const VERIFY_PAGE_HEADERS = {
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
};

export function verifyEmailHtml(page: { heading: string; message: string; confirmToken?: string }): string {
  // The confirmation is a POST, so a mail scanner that fetches the link does not use it up.
  const form = page.confirmToken
    ? `<form method="post" action="/v1/auth/verify-email"><input type="hidden" name="token" value="${escapeHtml(page.confirmToken)}"><button type="submit">Confirm my e-mail address</button></form>`
    : "";
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>svc credit: ${escapeHtml(page.heading)}</title><style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;line-height:1.5}button{font:inherit;padding:.6rem 1rem}</style></head><body><main><h1>${escapeHtml(page.heading)}</h1><p>${escapeHtml(page.message)}</p>${form}</main></body></html>`;
}
