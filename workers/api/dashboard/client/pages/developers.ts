import type { Page } from "../context.ts";
import { el, pageSection } from "../dom.ts";

/** Developers: not built yet. */
export const developersPage: Page = {
  path: "/developers",
  title: "Developers",
  nav: "Developers",
  render: () => pageSection("Developers", el("p", {}, "Not built yet.")),
};
