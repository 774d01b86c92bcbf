import { ApiError, post, session } from "./api.ts";
import { el } from "./dom.ts";
import { field, form, input } from "./forms.ts";

/**
 * Log in and sign up: the same `/v1/auth/*` routes as any client. On success
 * the token is kept in memory and `done()` renders the dashboard.
 */
export function authView(root: HTMLElement, done: () => void, notice?: string): void {
  const show = (mode: "login" | "signup") => {
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
        const res = await post<{ accessToken: string }>(mode === "login" ? "/auth/login" : "/auth/signup", body);
        session.set(res.accessToken);
        done();
      },
    );
    const other =
      mode === "login"
        ? el("p", {}, "New here? ", el("button", { type: "button", class: "link", onclick: () => show("signup") }, "Create an account"))
        : el("p", {}, "Have an account? ", el("button", { type: "button", class: "link", onclick: () => show("login") }, "Log in"));
    const title = el("h1", { id: "page-title", tabindex: -1 }, mode === "login" ? "Log in to svc credit" : "Create your svc credit account");
    root.replaceChildren(
      el(
        "main",
        { id: "main", class: "auth" },
        el(
          "section",
          { class: "page", "aria-labelledby": "page-title" },
          title,
          notice ? el("p", { class: "notice", role: "status" }, notice) : null,
          f,
          other,
        ),
      ),
    );
    title.focus();
  };
  show("login");
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
