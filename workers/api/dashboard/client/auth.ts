import { ApiError, post, session } from "./api.ts";
import { el } from "./dom.ts";
import { field, form, input } from "./forms.ts";

/**
 * Log in and sign up: the same `/v1/auth/*` routes as any client. On success
 * the token is kept in memory and `done()` renders the dashboard.
 */
export function authView(root: HTMLElement, done: () => void, notice?: string, releaseToken?: string): void {
  const show = (mode: "login" | "signup" | "release") => {
    if (mode === "release") return showRelease();
    const email = field("email", "E-mail", input({ type: "email", autocomplete: "email", required: true }));
    const password = field(
      "password",
      "Password",
      input({ type: "password", autocomplete: mode === "login" ? "current-password" : "new-password", required: true }),
      mode === "signup" ? "At least 12 characters." : undefined,
    );
    const company = mode === "signup" ? field("companyName", "Company name", input({ autocomplete: "organization", required: true })) : null;
    const f = form(
      { label: mode === "login" ? "Log in" : "Sign up", submit: mode === "login" ? "Log in" : "Create account" },
      [email, password, ...(company ? [company] : [])],
      async (data) => {
        const body: Record<string, string> = { email: String(data.get("email") ?? ""), password: String(data.get("password") ?? "") };
        if (mode === "signup") body.companyName = String(data.get("companyName") ?? "");
        if (mode === "signup" && releaseToken) body.releaseToken = releaseToken;
        const res = await post<{ accessToken: string }>(mode === "login" ? "/auth/login" : "/auth/signup", body);
        session.set(res.accessToken);
        done();
      },
    );
    const other =
      mode === "login"
        ? el("p", {}, "New here? ", el("button", { type: "button", class: "link", onclick: () => show("signup") }, "Create an account"))
        : el(
            "p",
            {},
            "Have an account? ",
            el("button", { type: "button", class: "link", onclick: () => show("login") }, "Log in"),
            ". Your address taken by an account you did not create? ",
            el("button", { type: "button", class: "link", onclick: () => show("release") }, "Free it"),
          );
    page(
      mode === "login" ? "Log in to svc credit" : "Create your svc credit account",
      notice ? el("p", { class: "notice", role: "status" }, notice) : null,
      mode === "signup" && releaseToken
        ? el("p", { class: "notice", role: "status" }, "Sign up with the address you just freed: for 24 hours, only you can.")
        : null,
      f,
      other,
    );
  };
  /** Shows one page of the signed-out view, its heading focused. */
  const page = (heading: string, ...children: (Node | null)[]) => {
    const title = el("h1", { id: "page-title", tabindex: -1 }, heading);
    root.replaceChildren(el("main", { id: "main", class: "auth" }, el("section", { class: "page", "aria-labelledby": "page-title" }, title, ...children)));
    title.focus();
  };
  /** Asks for a link that frees an address someone else used (`POST /v1/auth/release-email`); the answer is the same for any address. */
  const showRelease = () => {
    const status = el("p", { role: "status" });
    const f = form(
      { label: "Free an e-mail address", submit: "E-mail me a link" },
      [field("email", "E-mail", input({ type: "email", autocomplete: "email", required: true }))],
      async (data) => {
        const res = await post<{ message: string }>("/auth/release-email", { email: String(data.get("email") ?? "") });
        status.textContent = res.message;
      },
    );
    page(
      "Free an e-mail address",
      el("p", {}, "If someone created an account with your address and never verified it, we e-mail you a link that removes that account, so you can sign up."),
      f,
      status,
      el("p", {}, el("button", { type: "button", class: "link", onclick: () => show("signup") }, "Back to sign up")),
    );
  };
  show(releaseToken ? "signup" : "login");
}

/** The banner asking an unverified user to verify their e-mail, with a resend button. */
export function verifyBanner(): HTMLElement {
  const status = el("span", { role: "status" });
  return el(
    "div",
    { class: "banner", role: "region", "aria-label": "E-mail verification" },
    "Verify your e-mail address: notifications are e-mailed only after you follow the link we sent. ",
    el(
      "button",
      {
        type: "button",
        class: "link",
        onclick: async () => {
          try {
            await post("/auth/resend-verification");
            status.textContent = "Sent again.";
          } catch (error) {
            status.textContent = error instanceof ApiError ? error.message : "Could not send it.";
          }
        },
      },
      "Send the link again",
    ),
    " ",
    status,
  );
}
