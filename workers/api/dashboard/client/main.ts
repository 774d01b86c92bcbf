import { get, post, secondsLeft, session } from "./api.ts";
import { authView, verifyBanner } from "./auth.ts";
import type { Ctx, Me } from "./context.ts";
import { el, pageSection } from "./dom.ts";
import { layout } from "./layout.ts";
import { PAGES } from "./pages/index.ts";
import { BASE, currentPath, match } from "./router.ts";

/**
 * The merchant dashboard: one page that routes in the browser under
 * /dashboard, signed in with a token held in memory only (a reload or a new
 * tab asks to log in again), every read and write through `/v1`.
 */
const root = document.getElementById("app")!;
const config = JSON.parse(document.getElementById("dashboard-config")?.textContent ?? "{}") as { widgetOrigin?: string | null };

let me: Me | null = null;
let mode: "sandbox" | "live" = "sandbox";
let expiryTimer: ReturnType<typeof setTimeout> | null = null;
/** Bumped by every render: a page that finishes loading after a newer navigation is dropped, never shown over it. */
let renders = 0;

function expired(message = "Your session expired. Log in again to continue.") {
  session.set(null);
  me = null;
  if (expiryTimer) clearTimeout(expiryTimer);
  authView(root, signedIn, message);
}
session.onExpired(() => expired());

async function signedIn() {
  me = await get<Me>("/me");
  mode = me.tenant.mode;
  const left = session.token ? secondsLeft(session.token) : null;
  if (expiryTimer) clearTimeout(expiryTimer);
  // The page says so when the session ends, rather than failing on the next click.
  if (left !== null) expiryTimer = setTimeout(() => expired(), Math.max(0, left * 1000));
  if (currentPath() === "/" && location.pathname !== BASE) history.replaceState(null, "", BASE);
  await render();
}

export function navigate(path: string, options: { reloadMe?: boolean } = {}): void {
  history.pushState(null, "", `${BASE}${path === "/" ? "" : path}`);
  void (options.reloadMe ? reloadMe() : render());
}

/** Reads the session's tenant again (`GET /v1/me`), then renders the current page. */
async function reloadMe(): Promise<void> {
  me = await get<Me>("/me");
  await render();
}

async function render(): Promise<void> {
  if (!me) return;
  const mine = ++renders;
  const found = match(PAGES, currentPath()) ?? { page: PAGES[0]!, params: {} };
  const ctx: Ctx = {
    me,
    mode,
    canWrite: me.principal.role !== "MEMBER",
    params: found.params,
    query: new URLSearchParams(location.search),
    navigate,
    refresh: () => void render(),
    reload: reloadMe,
    widgetOrigin: config.widgetOrigin ?? null,
  };
  document.title = `${found.page.title} · svc credit`;
  let content: HTMLElement;
  try {
    content = await found.page.render(ctx);
  } catch (error) {
    if (!me) return; // the session expired while the page loaded: the login is showing
    content = pageSection(found.page.title, el("p", { class: "form-error", role: "alert" }, error instanceof Error ? error.message : String(error)));
  }
  if (mine !== renders) return; // a newer navigation has rendered, or will
  const frame = layout(ctx, PAGES, found.page, content, {
    // Ends the session on the server too (every device's), then shows the login whatever the answer.
    logOut: () =>
      void post("/auth/logout")
        .catch(() => undefined)
        .finally(() => expired("You are logged out.")),
    setMode: (next) => {
      mode = next;
      // The other mode's page cursor and filters (a chain, a cursor into another list) mean nothing in this one: its first page, unfiltered.
      if (location.search) history.replaceState(null, "", location.pathname);
      void render();
    },
  });
  if (!me.emailVerified) frame.querySelector("main")?.prepend(verifyBanner());
  root.replaceChildren(frame);
  (root.querySelector("#page-title") as HTMLElement | null)?.focus();
}

// Links inside the dashboard change the page without reloading (a reload would end the in-memory session).
document.addEventListener("click", (event) => {
  const link = (event.target as Element | null)?.closest?.("a");
  if (!link || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || link.target) return;
  const url = new URL(link.href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith(BASE)) return;
  event.preventDefault();
  navigate(`${url.pathname.slice(BASE.length) || "/"}${url.search}`);
});
window.addEventListener("popstate", () => void render());

// A release link's page sends its holder here (`#releaseToken=…`) to sign up with the freed address; the fragment never reaches a server, and is cleared at once.
const releaseToken = /^#releaseToken=([0-9A-Za-z]{20,100})$/.exec(location.hash)?.[1];
if (releaseToken) history.replaceState(null, "", `${location.pathname}${location.search}`);
authView(root, signedIn, undefined, releaseToken);
