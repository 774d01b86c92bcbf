import type { Page } from "../context.ts";
import { el, pageSection } from "../dom.ts";

/** Team: not built yet. */
export const teamPage: Page = {
  path: "/team",
  title: "Team",
  nav: "Team",
  render: () => pageSection("Team", el("p", {}, "Not built yet.")),
};
