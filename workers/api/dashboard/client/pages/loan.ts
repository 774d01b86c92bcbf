import type { Page } from "../context.ts";
import { el, pageSection } from "../dom.ts";

/** Loan: not built yet. */
export const loanPage: Page = {
  path: "/loans/:id",
  title: "Loan",
  render: () => pageSection("Loan", el("p", {}, "Not built yet.")),
};
