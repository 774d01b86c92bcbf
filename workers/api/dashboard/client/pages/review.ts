import { get } from "../api.ts";
import type { Ctx, Page } from "../context.ts";
import { el, pageSection } from "../dom.ts";
import { loansTable } from "../loans/loan-table.ts";
import { pager, queryString } from "../loans/pager.ts";
import { reviewForm } from "../loans/review-form.ts";
import type { ListPage, Loan } from "../loans/types.ts";

/**
 * The review queue: loans of the mode in view whose decision is
 * MANUAL_REVIEW (`GET /v1/loans?decision=MANUAL_REVIEW`) with their
 * reasons, each approved or rejected with a note by an Owner/Admin. A reviewed
 * loan's outcome is APPROVED or DECLINED, so after acting the queue is read
 * again and the loan is gone.
 */
export const reviewPage: Page = {
  path: "/review",
  title: "Review queue",
  nav: "Review queue",
  async render(ctx: Ctx) {
    const page = await get<ListPage<Loan>>(`/loans${queryString({ decision: "MANUAL_REVIEW", mode: ctx.mode, limit: "20", cursor: ctx.query.get("cursor") })}`);
    // After a review the queue is read again; the page says what was done (the loan has left the queue).
    const reviewed = ctx.query.get("reviewed");
    const status = el(
      "p",
      { role: "status", class: "notice", hidden: !reviewed },
      reviewed ? `Loan ${reviewed} ${ctx.query.get("outcome") === "APPROVED" ? "approved" : "rejected"}.` : "",
    );
    return pageSection(
      "Review queue",
      el("p", {}, "Loans above your policy's manual-review amount wait here until an Owner or Admin approves (funding follows) or rejects them."),
      status,
      loansTable(`${ctx.mode === "live" ? "Live" : "Sandbox"} loans waiting for review, newest first`, page.data, "No loan is waiting for review.", {
        header: ctx.canWrite ? "Review" : "Reasons",
        cell: (loan) =>
          el(
            "div",
            {},
            el("p", { class: "hint" }, (loan.decision?.reasons ?? []).map((r) => r.message).join(" ")),
            ctx.canWrite ? reviewForm(loan, (done) => ctx.navigate(`/review${queryString({ reviewed: done.id, outcome: done.decision?.outcome })}`)) : null,
          ),
      }),
      pager(ctx, "/review", page.nextCursor, "Review queue pages"),
    );
  },
};
