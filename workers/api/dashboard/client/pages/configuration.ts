import type { Page } from "../context.ts";
import { el, pageSection } from "../dom.ts";

/** Configuration: not built yet. */
export const configurationPage: Page = {
  path: "/configuration",
  title: "Configuration",
  nav: "Configuration",
  render: () => pageSection("Configuration", el("p", {}, "Not built yet.")),
};
