import { ApiError, get, post } from "../api.ts";
import type { Ctx, Page } from "../context.ts";
import { el, pageSection, table, when } from "../dom.ts";
import { checklist } from "../go-live/checklist.ts";
import { kybForm } from "../go-live/kyb-form.ts";
import type { GoLive } from "../go-live/types.ts";
import { walletsSection } from "../go-live/wallets.ts";

/**
 * Go live: the 10 steps of certification in order (`GET /v1/go-live`) with
 * the action that completes each, the KYB submission, live wallets with
 * proof of control and balances, the operator's audit, and (the OWNER)
 * certify. The API decides every step; the page shows what it says.
 */
export const goLivePage: Page = {
  path: "/go-live",
  title: "Go live",
  nav: "Go live",
  render: async (ctx) => {
    const [goLive, wallets] = await Promise.all([get<GoLive>("/go-live"), walletsSection(ctx)]);
    const kybDone = goLive.steps.find((s) => s.key === "KYB_APPROVED")?.status === "DONE";
    return pageSection(
      "Go live",
      summary(goLive),
      checklist(ctx, goLive),
      certifySection(ctx, goLive),
      kybDone ? null : kybSection(ctx),
      wallets,
      auditSection(goLive),
    );
  },
};

function summary(goLive: GoLive): HTMLElement {
  const done = goLive.steps.filter((s) => s.status === "DONE").length;
  return el(
    "p",
    { class: "notice", "data-item": "progress" },
    goLive.certifiedAt
      ? `Certified for live since ${when(goLive.certifiedAt)}.`
      : `${done} of ${goLive.steps.length} steps done. Live loans start once every step is done and the owner certifies.`,
  );
}

function certifySection(ctx: Ctx, goLive: GoLive): HTMLElement | null {
  if (goLive.certifiedAt) return null;
  if (ctx.me.principal.role !== "OWNER") return el("p", { class: "hint" }, "The account owner certifies the account for live once every step is done.");
  const status = el("p", { class: "form-status", role: "status" });
  const error = el("p", { class: "form-error", role: "alert", hidden: true });
  const button = el("button", { type: "button" }, "Certify for live");
  button.addEventListener("click", async () => {
    error.hidden = true;
    button.disabled = true;
    status.textContent = "Certifying…";
    try {
      await post<{ mode: "live"; certifiedAt: string }>("/go-live/certify");
      // The session's tenant is now live: read it again, and the frame shows the sandbox/live switch.
      await ctx.reload();
    } catch (e) {
      status.textContent = "";
      error.textContent = e instanceof ApiError ? e.messages.join(" ") : String(e);
      error.hidden = false;
    } finally {
      button.disabled = false;
    }
  });
  return el(
    "section",
    { "aria-labelledby": "certify-title" },
    el("h2", { id: "certify-title" }, "Certify"),
    el("p", {}, goLive.nextStep ? "The API refuses certification until every step is done; it says which one is missing." : "Every step is done."),
    el("div", { class: "actions" }, button, status),
    error,
  );
}

function kybSection(ctx: Ctx): HTMLElement {
  return el(
    "section",
    { "aria-labelledby": "kyb-title" },
    el("h2", { id: "kyb-title" }, "Business verification (KYB)"),
    el("p", { class: "hint" }, "The platform operator reviews it. Submitting again replaces a submission not yet approved."),
    ctx.canWrite ? kybForm(() => ctx.refresh()) : el("p", { class: "hint" }, "An owner or admin submits it."),
  );
}

function auditSection(goLive: GoLive): HTMLElement {
  return el(
    "section",
    { "aria-labelledby": "audit-title" },
    el("h2", { id: "audit-title" }, "Operator decisions"),
    table(
      "Every platform operator action on this account, oldest first",
      ["When", "Action", "Decision", "Note", "By"],
      goLive.audit.map((a) => [when(a.at), a.action, a.decision ?? "—", a.note ?? "—", a.actor]),
      "No operator decisions yet.",
    ),
  );
}
