import type { Ctx } from "../context.ts";
import { el, when } from "../dom.ts";
import type { GoLive } from "./types.ts";

/**
 * What completes each step: a dashboard page, a section of this page, or
 * (commercial terms) the platform operator. The checklist's own `detail`
 * says what is missing; this says where to do it.
 */
const ACTIONS: Record<string, { text: string; page?: string; section?: string }> = {
  KYB_APPROVED: { text: "Submit your business verification", section: "kyb-title" },
  COMMERCIAL_TERMS_AGREED: { text: "The platform operator records the signed commercial terms once your KYB is approved." },
  UNDERWRITING_POLICY_ACTIVE: { text: "Set the underwriting policy", page: "/configuration" },
  LOAN_PRODUCT_ACTIVE: { text: "Activate a merchant configuration", page: "/configuration" },
  LIQUIDITY_AVAILABLE: { text: "Add a DISBURSEMENT wallet and prove control of it", section: "wallets-title" },
  WEBHOOK_CONFIGURED: { text: "Register a webhook", page: "/developers" },
  API_KEY_ISSUED: { text: "Create an API key", page: "/developers" },
  OWNER_EXISTS: { text: "Invite the account owner", page: "/team" },
  BRANDING_CONFIGURED: { text: "Set your branding", page: "/configuration" },
  SANDBOX_CYCLE_COMPLETED: { text: "Fund and repay a sandbox loan", page: "/loans" },
};

const LABEL = { DONE: "Done", PENDING: "Next", BLOCKED: "Waiting" } as const;

/** The 10 steps in order, each with its state, the API's detail and the action that completes it. */
export function checklist(ctx: Ctx, goLive: GoLive): HTMLElement {
  return el(
    "section",
    { "aria-labelledby": "steps-title" },
    el("h2", { id: "steps-title" }, "Checklist"),
    el(
      "ol",
      { class: "steps" },
      ...goLive.steps.map((s) =>
        el(
          "li",
          { class: `step step-${s.status}`, "data-step": s.key, "data-status": s.status, "aria-current": s.status === "PENDING" ? "step" : null },
          el("p", { class: "step-head" }, el("span", { class: `badge status-${s.status}` }, LABEL[s.status]), " ", el("strong", {}, s.title)),
          el("p", { class: "step-detail" }, s.status === "DONE" ? `Completed ${when(s.completedAt)}.` : s.detail),
          s.status === "DONE" ? null : action(ctx, s.key),
        ),
      ),
    ),
  );
}

function action(ctx: Ctx, key: string): HTMLElement | null {
  const a = ACTIONS[key];
  if (!a) return null;
  if (a.page) return el("p", { class: "step-action" }, el("a", { href: `/dashboard${a.page}`, "data-link": true }, a.text));
  if (a.section && ctx.canWrite) {
    const id = a.section;
    // A button, not a #fragment link: the dashboard's links change pages, and the section is on this one.
    return el(
      "p",
      { class: "step-action" },
      el(
        "button",
        {
          type: "button",
          class: "link",
          onclick: () => {
            const heading = document.getElementById(id);
            heading?.setAttribute("tabindex", "-1");
            heading?.scrollIntoView({ block: "start" });
            heading?.focus();
          },
        },
        a.text,
      ),
    );
  }
  return el("p", { class: "step-action hint" }, a.text);
}
