import type { Page } from "../context.ts";
import { el, pageSection } from "../dom.ts";

/** Review queue: not built yet. */
export const reviewPage: Page = {
  path: "/review",
  title: "Review queue",
  nav: "Review queue",
  render: () => pageSection("Review queue", el("p", {}, "Not built yet.")),
};
