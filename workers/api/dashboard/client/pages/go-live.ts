import type { Page } from "../context.ts";
import { el, pageSection } from "../dom.ts";

/** Go live: not built yet. */
export const goLivePage: Page = {
  path: "/go-live",
  title: "Go live",
  nav: "Go live",
  render: () => pageSection("Go live", el("p", {}, "Not built yet.")),
};
