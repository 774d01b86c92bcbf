import { copyButton, el } from "../dom.ts";

/**
 * A secret the API returns once (an API key, a webhook signing secret): shown
 * with a copy button, held by this element only, so it is gone once the
 * merchant leaves the page.
 */
export function shownOnce(label: string, secret: string): HTMLElement {
  return el(
    "div",
    { class: "banner shown-once", role: "status" },
    el("p", {}, el("strong", {}, label), " Copy it now: it is shown this once and never again."),
    el("p", { class: "secret", "data-secret": true }, secret),
    copyButton(secret, `Copy ${label.replace(/[.:]$/, "").toLowerCase()}`),
  );
}

/** A "Next page" link keeping the page's other query parameters. */
export function nextPageLink(ctx: { query: URLSearchParams }, path: string, param: string, cursor: string | null, label = "Next page"): HTMLElement | null {
  if (!cursor) return null;
  const q = new URLSearchParams(ctx.query);
  q.set(param, cursor);
  return el("p", { class: "pager" }, el("a", { href: `/dashboard${path}?${q}` }, label));
}
