import type { Page } from "../context.ts";
import { el, pageSection } from "../dom.ts";

/** Settlements: not built yet. */
export const settlementsPage: Page = {
  path: "/settlements",
  title: "Settlements",
  nav: "Settlements",
  render: () => pageSection("Settlements", el("p", {}, "Not built yet.")),
};
