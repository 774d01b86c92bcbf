import type { Page } from "../context.ts";
import { el, pageSection } from "../dom.ts";

/** Loans: not built yet. */
export const loansPage: Page = {
  path: "/loans",
  title: "Loans",
  nav: "Loans",
  render: () => pageSection("Loans", el("p", {}, "Not built yet.")),
};
