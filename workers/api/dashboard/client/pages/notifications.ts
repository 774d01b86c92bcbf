import { get, post } from "../api.ts";
import { actionButton } from "../confirm-button.ts";
import type { PageOf } from "../configuration/types.ts";
import type { Ctx, Page } from "../context.ts";
import { nextPageLink } from "../developers/shown-once.ts";
import { el, pageSection, table, when } from "../dom.ts";

/**
 * Notifications (`GET /v1/notifications?mode=`): every event of the mode the
 * dashboard looks at, with its e-mail to the owner (status, attempts, last
 * error), the unread count, mark one or all read. `?unread=true` shows the
 * unread ones only; `?cursor=` pages with the API's cursor. Marking read is
 * allowed to every role (the API lets any session do it).
 */
type Notification = {
  id: string;
  type: string;
  title: string;
  body: string;
  createdAt: string;
  readAt: string | null;
  email: { to: string | null; status: "PENDING" | "SENT" | "FAILED" | "SKIPPED"; attempts: number; error: string | null; sentAt: string | null };
};

const emailText = (n: Notification): string => {
  const e = n.email;
  const tries = e.attempts ? ` (${e.attempts} attempt${e.attempts === 1 ? "" : "s"})` : "";
  const why = e.error ? `: ${e.error}` : "";
  return `${e.status}${e.status === "SENT" && e.sentAt ? ` ${when(e.sentAt)}` : ""}${tries}${why}`;
};

async function render(ctx: Ctx): Promise<HTMLElement> {
  const unreadOnly = ctx.query.get("unread") === "true";
  const cursor = ctx.query.get("cursor");
  const q = new URLSearchParams({ mode: ctx.mode, limit: "20" });
  if (unreadOnly) q.set("unread", "true");
  if (cursor) q.set("cursor", cursor);
  const [page, unread] = await Promise.all([
    get<PageOf<Notification>>(`/notifications?${q}`),
    get<PageOf<Notification>>(`/notifications?mode=${ctx.mode}&unread=true&limit=100`),
  ]);
  const unreadCount = `${unread.data.length}${unread.nextCursor ? "+" : ""}`;
  const markRead = (n: Notification) =>
    actionButton(
      "Mark read",
      async () => {
        await post(`/notifications/${n.id}/read`);
        ctx.refresh();
      },
      { "aria-label": `Mark "${n.title}" read` },
    );
  const rows = page.data.map((n) => [
    el("span", { class: n.readAt ? "" : "unread" }, n.readAt ? "" : el("span", { class: "badge" }, "Unread "), el("strong", {}, n.title), el("br"), n.body),
    el("span", { class: "mono" }, n.type),
    when(n.createdAt),
    emailText(n),
    n.readAt ? `Read ${when(n.readAt)}` : markRead(n),
  ]);
  const filterLink = unreadOnly
    ? el("a", { href: "/dashboard/notifications" }, "Show all notifications")
    : el("a", { href: "/dashboard/notifications?unread=true" }, "Show unread only");
  return pageSection(
    "Notifications",
    el("p", { class: "notice", role: "status" }, `${unreadCount} unread in ${ctx.mode}.`),
    el(
      "p",
      { class: "actions" },
      filterLink,
      unread.data.length
        ? actionButton("Mark all read (sandbox and live)", async () => {
            await post("/notifications/read-all");
            ctx.refresh();
          })
        : null,
    ),
    el(
      "p",
      { class: "hint" },
      "Each notification is e-mailed to the account owner; SKIPPED means not sent (for example, the owner's address is not verified yet).",
    ),
    table(
      `Notifications (${ctx.mode})`,
      ["Notification", "Event", "When", "E-mail", "Read"],
      rows,
      unreadOnly ? "No unread notification." : "No notification yet.",
    ),
    nextPageLink(ctx, "/notifications", "cursor", page.nextCursor),
  );
}

export const notificationsPage: Page = { path: "/notifications", title: "Notifications", nav: "Notifications", render };
