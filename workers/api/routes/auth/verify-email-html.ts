import { DomainError, toErrorBody, validationError } from "../../../../shared/domain/errors.ts";

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

/** A page's confirmation: a form posting the token to `action`. */
type Confirm = { token: string; action?: string; button?: string };

export function verifyEmailHtml(page: { heading: string; message: string; confirm?: Confirm; link?: { href: string; text: string } }): string {
  // The confirmation is a POST, so a mail scanner that fetches the link does not use it up.
  const { confirm } = page;
  const form = confirm
    ? `<form method="post" action="${escapeHtml(confirm.action ?? "/v1/auth/verify-email")}"><input type="hidden" name="token" value="${escapeHtml(confirm.token)}"><button type="submit">${escapeHtml(confirm.button ?? "Confirm my e-mail address")}</button></form>`
    : "";
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>svc credit: ${escapeHtml(page.heading)}</title><style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;line-height:1.5}button{font:inherit;padding:.6rem 1rem}</style></head><body><main><h1>${escapeHtml(page.heading)}</h1><p>${escapeHtml(page.message)}</p>${form}${page.link ? `<p><a href="${escapeHtml(page.link.href)}">${escapeHtml(page.link.text)}</a></p>` : ""}</main></body></html>`;
}

const FORM_BODY = /^(application\/x-www-form-urlencoded|multipart\/form-data)\b/i;

/**
 * The token a link's route was given: from a JSON body, or from the form of
 * the link's page (`fromForm`: the answer is then a page). `read` returns the
 * validated body's token for the one sent.
 */
export function linkToken(contentType: string | undefined, read: (fromForm: boolean) => unknown): { token: string; fromForm: boolean } {
  const fromForm = FORM_BODY.test(contentType ?? "");
  const token = read(fromForm);
  if (typeof token !== "string") throw validationError(["token: is required (expected string)"]);
  return { token, fromForm };
}

/** For a person at a browser: runs `use`, and answers with the `done` page, or with a page saying why it failed (its status). */
export async function linkOutcomePage(use: () => Promise<unknown>, done: Parameters<typeof verifyEmailHtml>[0]): Promise<Response> {
  const page = (body: Parameters<typeof verifyEmailHtml>[0], status: number) =>
    new Response(verifyEmailHtml(body), { status, headers: { "content-type": "text/html; charset=UTF-8", ...VERIFY_PAGE_HEADERS } });
  try {
    await use();
    return page(done, 200);
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    const body = toErrorBody(err);
    return page({ heading: "This link cannot be used", message: Array.isArray(body.message) ? body.message.join("; ") : body.message }, err.status);
  }
}
