import type { Page } from "../context.ts";
import { el, pageSection } from "../dom.ts";

/** Borrower: not built yet. */
export const borrowerPage: Page = {
  path: "/borrowers/:id",
  title: "Borrower",
  render: () => pageSection("Borrower", el("p", {}, "Not built yet.")),
};
