import type { Ctx } from "../context.ts";
import { copyButton, el } from "../dom.ts";
import { money } from "./loan-bits.ts";
import type { Loan } from "./types.ts";

/**
 * "Copy repayment link" for an ACTIVE or DEFAULTED widget loan: the hosted
 * repayment page `{embed_url}/embed/<embedKey>/repay/<loanId>` (DECISIONS.md
 * "Embed and widget") of the program it was drawn through. A program's embed
 * key reaches only that program's loans (an API loan, or another program's,
 * is 404 there), so a loan made through the API, or one whose program is gone,
 * or a deployment without a widget host, has no page to link: the section
 * says so and copies the repayment details instead.
 */
export function repaySection(ctx: Ctx, loan: Loan): HTMLElement | null {
  if (loan.status !== "ACTIVE" && loan.status !== "DEFAULTED") return null;
  const program = loan.program ? ctx.me.widgetPrograms.find((p) => p.id === loan.program) : undefined;
  const heading = el("h2", { id: "repay-title" }, "Repayment");
  if (ctx.widgetOrigin && program) {
    const link = `${ctx.widgetOrigin}/embed/${encodeURIComponent(program.embedKey)}/repay/${encodeURIComponent(loan.id)}`;
    return el(
      "section",
      { "aria-labelledby": "repay-title" },
      heading,
      el("p", {}, `The borrower repays ${money(loan.amountDue, loan)} on the hosted repayment page of the program “${program.name}”:`),
      el("p", { class: "secret", "data-testid": "repay-link" }, link),
      el("div", { class: "actions" }, copyButton(link, "Copy repayment link")),
    );
  }
  const why = !ctx.widgetOrigin
    ? "No widget host is configured for this deployment, so there is no hosted repayment page to link."
    : loan.program
      ? "The widget program this loan was drawn through is deleted, so its hosted repayment page is gone."
      : "This loan was made through the API: the hosted repayment pages are the widget programs' own, for their loans.";
  const details = [
    `Repay loan ${loan.id}: ${money(loan.amountDue, loan)} on ${loan.chain}, from the wallet ${loan.borrowerWalletAddress}.`,
    `Your backend gets the exact transactions to sign with POST /v1/loans/${loan.id}/repay (API key).`,
  ].join("\n");
  return el(
    "section",
    { "aria-labelledby": "repay-title" },
    heading,
    el("p", { class: "notice" }, `${why} Copy the repayment details instead.`),
    el("pre", { role: "region", "aria-label": "Repayment details", tabindex: 0 }, details),
    el("div", { class: "actions" }, copyButton(details, "Copy repayment details")),
  );
}
