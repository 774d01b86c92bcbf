import type { Page } from "../context.ts";
import { el, pageSection } from "../dom.ts";

/** Widget programs: not built yet. */
export const programsPage: Page = {
  path: "/programs",
  title: "Widget programs",
  nav: "Widget programs",
  render: () => pageSection("Widget programs", el("p", {}, "Not built yet.")),
};
