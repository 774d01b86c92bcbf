import type { Ctx } from "../context.ts";
import { copyButton, el } from "../dom.ts";
import { money } from "./loan-bits.ts";
import type { Loan } from "./types.ts";

/**
 * "Copy repayment link" for an ACTIVE or DEFAULTED loan: the widget's hosted
 * repayment page `{embed_url}/embed/<embedKey>/repay/<loanId>` (DECISIONS.md
 * "Embed and widget"), with an embed key of a program of the loan's mode (the
 * loan's own program when it has one). Without a widget host or such a
 * program there is no page to link, so the page says so and copies the
 * repayment details instead.
 */
export function repaySection(ctx: Ctx, loan: Loan): HTMLElement | null {
  if (loan.status !== "ACTIVE" && loan.status !== "DEFAULTED") return null;
  const programs = ctx.me.widgetPrograms.filter((p) => p.mode === loan.mode);
  const program = programs.find((p) => p.id === loan.program) ?? programs[0];
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
    : `There is no ${loan.mode} widget program, so there is no hosted repayment page to link; create one under Widget programs.`;
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
