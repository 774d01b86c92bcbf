import { get } from "../api.ts";
import type { Ctx, Page } from "../context.ts";
import { el, pageSection } from "../dom.ts";
import { deliveriesSection, settlementsSection, timelineSection } from "../loans/loan-history.ts";
import { statusText } from "../loans/loan-bits.ts";
import { agreementSection, decisionSection, termsSection } from "../loans/loan-terms.ts";
import { repaySection } from "../loans/repay-link.ts";
import { reviewForm } from "../loans/review-form.ts";
import type { Delivery, ListPage, Loan, LoanEvent, Settlement } from "../loans/types.ts";

/**
 * A loan's page: its terms, decision and reasons, agreement, the timeline of
 * its events, its settlements with their transactions, its webhook
 * deliveries, and the actions its state allows: the review of a
 * MANUAL_REVIEW loan (Owner/Admin) and the repayment link of an ACTIVE or
 * DEFAULTED one. Everything is read in parallel from `/v1`.
 */
export const loanPage: Page = {
  path: "/loans/:id",
  title: "Loan",
  async render(ctx: Ctx) {
    const id = encodeURIComponent(ctx.params.id ?? "");
    const [loan, events, settlements, deliveries] = await Promise.all([
      get<Loan>(`/loans/${id}`),
      get<ListPage<LoanEvent>>(`/events?loanId=${id}&limit=100`),
      get<ListPage<Settlement>>(`/settlements/${id}?limit=100`),
      get<ListPage<Delivery>>(`/webhooks/deliveries?loanId=${id}&limit=100`),
    ]);
    return pageSection(
      "Loan",
      el("p", {}, el("span", { class: "mono" }, loan.id), ` · ${statusText(loan)} · ${loan.principalAmount} ${loan.stablecoin} to ${loan.borrowerRef}`),
      el("p", {}, el("a", { href: "/dashboard/loans" }, "All loans")),
      reviewBlock(ctx, loan),
      repaySection(ctx, loan),
      termsSection(loan),
      decisionSection(loan),
      agreementSection(loan),
      timelineSection(events.data, events.nextCursor !== null),
      // The API lists newest first; the loan page tells its story oldest first.
      settlementsSection([...settlements.data].reverse()),
      deliveriesSection(deliveries.data),
    );
  },
};

/** Waiting for a reviewer: the review form for an Owner/Admin, a note for a MEMBER (who may not act). */
function reviewBlock(ctx: Ctx, loan: Loan): HTMLElement | null {
  if (loan.status !== "CREATED" || loan.decision?.outcome !== "MANUAL_REVIEW") return null;
  return el(
    "section",
    { "aria-labelledby": "review-title", class: "notice" },
    el("h2", { id: "review-title" }, "Waiting for review"),
    ctx.canWrite ? reviewForm(loan, () => ctx.refresh()) : el("p", {}, "An Owner or Admin approves or rejects this loan."),
  );
}
