import { ApiError, get } from "../api.ts";
import type { Ctx, Page } from "../context.ts";
import { el, pageSection, table, when } from "../dom.ts";
import { field, form, input } from "../forms.ts";
import { borrowerLink, statusText } from "../loans/loan-bits.ts";
import type { ListPage, Loan } from "../loans/types.ts";
import { borrowerPath, isDotSegment } from "../router.ts";

/**
 * Borrowers: the API has no borrower list (a borrower is made on first use
 * by a loan or a KYC update), so the page looks one up by your ref or its
 * id, and lists the borrowers of the latest loans of the mode in view.
 */
export const borrowersPage: Page = {
  path: "/borrowers",
  title: "Borrowers",
  nav: "Borrowers",
  async render(ctx: Ctx) {
    const lookup = form(
      { label: "Find a borrower", submit: "Find" },
      [field("ref", "Borrower ref or id", input({ autocomplete: "off", required: true }), "Your reference for the borrower, as sent with its loans")],
      async (data) => {
        const ref = String(data.get("ref") ?? "").trim();
        if (!ref) return;
        // The borrower's page reads GET /v1/borrowers/:id, whose answer (404 included) it shows.
        if (!isDotSegment(ref)) return ctx.navigate(`/borrowers/${encodeURIComponent(ref)}`);
        // "." and ".." cannot be a path segment (`borrowerPath`): found by its loans (of either mode), then by its id.
        const [loan] = (await get<ListPage<Loan>>(`/loans?borrowerRef=${encodeURIComponent(ref)}&limit=1`)).data;
        if (!loan) throw new ApiError(404, [`ref: no borrower with the ref “${ref}” has a loan; find it by its id`]);
        ctx.navigate(borrowerPath(loan));
      },
    );
    const loans = await get<ListPage<Loan>>(`/loans?mode=${ctx.mode}&limit=50`);
    const latest = new Map<string, Loan>();
    for (const loan of loans.data) if (!latest.has(loan.borrowerRef)) latest.set(loan.borrowerRef, loan);
    return pageSection(
      "Borrowers",
      lookup,
      el("h2", {}, "Recent borrowers"),
      table(
        `Borrowers of the latest ${ctx.mode} loans`,
        ["Borrower", "Latest loan", "Status", "Wallet"],
        [...latest.values()].map((l) => [borrowerLink(l), when(l.createdAt), statusText(l), el("span", { class: "mono" }, l.borrowerWalletAddress)]),
        `No ${ctx.mode} loans yet, so no borrowers to show. Find one by its ref above (a KYC update may have created it).`,
      ),
    );
  },
};
