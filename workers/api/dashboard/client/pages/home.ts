import type { Page } from "../context.ts";
import { el, pageSection } from "../dom.ts";

/** Home: not built yet. */
export const homePage: Page = {
  path: "/",
  title: "Home",
  nav: "Home",
  render: () => pageSection("Home", el("p", {}, "Not built yet.")),
};
