import { el } from "../dom.ts";
import { BASE, borrowerPath } from "../router.ts";
import type { Loan } from "./types.ts";

/** The loan's link to its page: its id, shortened for the table but whole for screen readers and copying. */
export const loanLink = (loan: Pick<Loan, "id">): HTMLAnchorElement =>
  el("a", { href: `${BASE}/loans/${encodeURIComponent(loan.id)}`, class: "mono", "aria-label": `Loan ${loan.id}` }, `${loan.id.slice(0, 8)}…`);

/** The link to the loan's borrower's page, named by its ref (`borrowerPath`: a ref of "." or ".." goes by the borrower's id). */
export const borrowerLink = (loan: Pick<Loan, "borrowerRef" | "borrowerId">): HTMLAnchorElement =>
  el("a", { href: `${BASE}${borrowerPath(loan)}` }, loan.borrowerRef);

/** The funding states an approved loan waits in, as the lists say them. */
const FUNDING_WAITS: Record<string, string> = {
  AWAITING_LIQUIDITY: "waiting for liquidity",
  WAITING_KYC: "waiting for KYC and agreement",
  HELD: "funding held",
};

/**
 * The status a merchant reads: the derived DECLINED for a declined loan, IN REVIEW while waiting for a reviewer,
 * ACTIVE (overdue) while late, and what an approved loan not funded yet waits for.
 */
export function statusText(loan: Loan): string {
  if (loan.derivedStatus === "CREATED" && loan.decision?.outcome === "MANUAL_REVIEW") return "IN REVIEW";
  if (loan.status === "ACTIVE" && loan.overdue) return "ACTIVE (overdue)";
  // Approved and not funded yet: what it waits for, so loans stuck on liquidity, KYC or a hold stand out in the lists.
  if (loan.derivedStatus === "CREATED" && loan.decision?.outcome === "APPROVED" && FUNDING_WAITS[loan.fundingState])
    return `APPROVED (${FUNDING_WAITS[loan.fundingState]})`;
  return loan.derivedStatus;
}

/** An API amount with its stablecoin; the 6-decimal amounts (paid, due) are shown to the cent when they are whole cents. */
export const money = (amount: string, loan: Pick<Loan, "stablecoin">): string => `${amount.replace(/^(-?\d+\.\d{2})0{4}$/, "$1")} ${loan.stablecoin}`;

/** What the borrower owes now: nothing to show before the loan is funded (declined, in review, waiting). */
export const amountDue = (loan: Loan): string => (loan.fundedAt ? money(loan.amountDue, loan) : "—");

/** Block explorers of the live chains; sandbox chains are simulated (their hashes exist nowhere else), so they are shown, not linked. */
const EXPLORERS: Record<string, string> = {
  POLYGON: "https://polygonscan.com/tx/",
  BASE: "https://basescan.org/tx/",
  TON: "https://tonviewer.com/transaction/",
};

/** A transaction hash, linked to the chain's explorer where there is one. */
export function txLink(chain: string, hash: string | null): HTMLElement | string {
  if (!hash) return "—";
  const explorer = EXPLORERS[chain];
  return explorer
    ? el("a", { href: `${explorer}${encodeURIComponent(hash)}`, class: "mono", rel: "noopener noreferrer", target: "_blank" }, hash)
    : el("span", { class: "mono" }, hash);
}
