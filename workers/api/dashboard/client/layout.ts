import type { Ctx, Page } from "./context.ts";
import { el } from "./dom.ts";
import { BASE } from "./router.ts";

/**
 * The frame around every signed-in page: a skip link, the tenant and who is
 * signed in, the sandbox/live switch (always visible once live is enabled,
 * so the merchant always knows which mode they look at), the navigation and
 * the log-out button.
 */
export function layout(
  ctx: Ctx,
  pages: Page[],
  current: Page,
  content: HTMLElement,
  actions: { logOut(): void; setMode(mode: "sandbox" | "live"): void },
): HTMLElement {
  const live = ctx.me.tenant.certifiedAt !== null;
  const modeSwitch = live
    ? el(
        "fieldset",
        { class: "mode-switch" },
        el("legend", {}, "Mode"),
        ...(["sandbox", "live"] as const).map((mode) =>
          el(
            "label",
            {},
            el("input", { type: "radio", name: "mode", value: mode, checked: ctx.mode === mode, onchange: () => actions.setMode(mode) }),
            mode === "live" ? " Live" : " Sandbox",
          ),
        ),
      )
    : el("p", { class: "mode-badge", "data-mode": "sandbox" }, "Sandbox");
  const nav = el(
    "nav",
    { "aria-label": "Dashboard" },
    el(
      "ul",
      {},
      ...pages
        .filter((p) => p.nav)
        .map((p) =>
          el("li", {}, el("a", { href: `${BASE}${p.path === "/" ? "" : p.path}`, "aria-current": p === current ? "page" : null, "data-link": true }, p.nav!)),
        ),
    ),
  );
  return el(
    "div",
    { class: `shell mode-${ctx.mode}` },
    el("a", { href: "#main", class: "skip" }, "Skip to content"),
    el(
      "header",
      { class: "top" },
      el("p", { class: "brand" }, "svc credit"),
      el("p", { class: "tenant" }, ctx.me.tenant.name, el("span", { class: "who" }, ` · ${ctx.me.principal.email} (${ctx.me.principal.role})`)),
      modeSwitch,
      el("button", { type: "button", class: "secondary", onclick: actions.logOut }, "Log out"),
    ),
    nav,
    el("main", { id: "main" }, content),
  );
}
