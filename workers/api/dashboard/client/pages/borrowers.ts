import type { Page } from "../context.ts";
import { el, pageSection } from "../dom.ts";

/** Borrowers: not built yet. */
export const borrowersPage: Page = {
  path: "/borrowers",
  title: "Borrowers",
  nav: "Borrowers",
  render: () => pageSection("Borrowers", el("p", {}, "Not built yet.")),
};
