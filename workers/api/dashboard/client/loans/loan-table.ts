import { type Child, el, table, when } from "../dom.ts";
import { amountDue, borrowerLink, loanLink, money, statusText } from "./loan-bits.ts";
import type { Loan } from "./types.ts";

/** A table of loans, each row linking to the loan's page; `extra` adds a last column (the review queue's actions). */
export function loansTable(caption: string, loans: Loan[], empty: string, extra?: { header: string; cell(loan: Loan): Child }): HTMLElement {
  const headers = ["Loan", "Created", "Borrower", "Wallet", "Chain", "Principal", "Amount due", "Status", "Due"];
  return table(
    caption,
    extra ? [...headers, extra.header] : headers,
    loans.map((loan) => {
      const cells: Child[] = [
        loanLink(loan),
        when(loan.createdAt),
        borrowerLink(loan),
        shortWallet(loan.borrowerWalletAddress),
        loan.chain,
        money(loan.principalAmount, loan),
        amountDue(loan),
        statusText(loan),
        when(loan.dueAt),
      ];
      return extra ? [...cells, extra.cell(loan)] : cells;
    }),
    empty,
  );
}

/** The wallet shortened for a table cell, whole in its title. */
const shortWallet = (address: string): HTMLElement =>
  el("span", { class: "mono", title: address }, address.length > 14 ? `${address.slice(0, 8)}…${address.slice(-4)}` : address);
