import type { Page } from "../context.ts";
import { el, pageSection } from "../dom.ts";

/** Notifications: not built yet. */
export const notificationsPage: Page = {
  path: "/notifications",
  title: "Notifications",
  nav: "Notifications",
  render: () => pageSection("Notifications", el("p", {}, "Not built yet.")),
};
