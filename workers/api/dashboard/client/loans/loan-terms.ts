import { type Child, el, when } from "../dom.ts";
import { borrowerLink, money, statusText, txLink } from "./loan-bits.ts";
import type { Loan } from "./types.ts";

/** A description list of label → value pairs (values are text or nodes, never HTML). */
export function terms(pairs: [string, Child][]): HTMLElement {
  return el("dl", { class: "terms" }, ...pairs.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v ?? "—")]));
}

const section = (id: string, title: string, ...content: Child[]) => el("section", { "aria-labelledby": id }, el("h2", { id }, title), ...content);

/** The loan's terms as the API computes them now (late fees and amount due at the tenant's clock). */
export function termsSection(loan: Loan): HTMLElement {
  return section(
    "terms-title",
    "Terms",
    terms([
      ["Status", statusText(loan)],
      ["Principal", money(loan.principalAmount, loan)],
      ["Processing fee", money(loan.processingFee, loan)],
      ["Late fees so far", money(loan.lateFee, loan)],
      ["Total due", money(loan.totalDue, loan)],
      ["Paid", money(loan.amountPaid, loan)],
      ["Amount due now", money(loan.amountDue, loan)],
      ["Tenure", `${loan.tenureDays} days (grace ${loan.gracePeriodDays} days)`],
      ["Due", when(loan.dueAt)],
      ["Chain", `${loan.chain} (${loan.mode})`],
      ["Wallet", el("span", { class: "mono" }, loan.borrowerWalletAddress)],
      ["Borrower", borrowerLink(loan)],
      ["Funding", loan.fundingState],
      ["Funded", when(loan.fundedAt)],
      ["Funding transaction", txLink(loan.chain, loan.fundingTxHash)],
      ["Created", when(loan.createdAt)],
      ["Channel", loan.channel ? `${loan.channel} (widget)` : "API"],
    ]),
  );
}

/** The underwriting decision, its reasons, and the review when there was one. */
export function decisionSection(loan: Loan): HTMLElement {
  const d = loan.decision;
  if (!d) return section("decision-title", "Decision", el("p", { class: "empty" }, "Not decided yet."));
  return section(
    "decision-title",
    "Decision",
    terms([
      ["Outcome", d.outcome],
      ["Policy version", d.policyVersion === null ? "—" : String(d.policyVersion)],
      ["Decided", when(d.decidedAt)],
      ...(d.reviewedAt
        ? ([
            ["Reviewed", when(d.reviewedAt)],
            ["Reviewer", el("span", { class: "mono" }, d.reviewedBy ?? "—")],
            ["Review note", d.reviewNote || "—"],
          ] as [string, Child][])
        : []),
    ]),
    d.reasons.length > 0
      ? el("ul", { "aria-label": "Reasons" }, ...d.reasons.map((r) => el("li", {}, el("span", { class: "mono" }, r.code), ` — ${r.message}`)))
      : el("p", { class: "empty" }, "No rule fired."),
  );
}

/** The agreement the borrower's wallet signed, kept immutably (none on file: said so). */
export function agreementSection(loan: Loan): HTMLElement {
  const a = loan.agreement;
  if (!a) return section("agreement-title", "Agreement", el("p", { class: "empty" }, "No signed agreement on file."));
  return section(
    "agreement-title",
    "Agreement",
    terms([
      ["Signed", when(a.createdAt)],
      ["Wallet", el("span", { class: "mono" }, a.walletAddress)],
      ["Signature", el("span", { class: "mono" }, a.walletSignature)],
    ]),
    el("pre", { role: "region", "aria-label": "Agreement text", tabindex: 0 }, a.agreementText),
  );
}
