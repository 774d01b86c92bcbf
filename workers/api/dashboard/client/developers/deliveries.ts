import { get, post } from "../api.ts";
import { actionButton } from "../confirm-button.ts";
import type { PageOf } from "../configuration/types.ts";
import type { Ctx } from "../context.ts";
import { el, table, when } from "../dom.ts";
import { nextPageLink } from "./shown-once.ts";
import type { Delivery, DeliveryAttempt } from "./types.ts";

/**
 * Webhook deliveries of the mode the dashboard looks at
 * (`GET /v1/webhooks/deliveries?mode=`), each with every attempt, and a
 * redeliver button for finished ones (`POST …/deliveries/:id/redeliver`;
 * the API answers 409 for one still PENDING). `reload()` reads them again
 * (after a test event), polling briefly while one is still PENDING.
 */
const attemptText = (a: DeliveryAttempt): string =>
  `#${a.attempt} ${when(a.startedAt)}: ${a.finishedAt === null ? "in flight" : a.responseStatus !== null ? `HTTP ${a.responseStatus}` : (a.error ?? "no answer")}${a.durationMs !== null ? ` in ${a.durationMs} ms` : ""}`;

export function deliveriesSection(ctx: Ctx): { element: HTMLElement; reload(): Promise<void> } {
  const box = el("div", { class: "deliveries", "aria-live": "polite" });
  let polls = 0;
  const reload = async (): Promise<void> => {
    const cursor = ctx.query.get("deliveriesCursor");
    const page = await get<PageOf<Delivery>>(`/webhooks/deliveries?mode=${ctx.mode}&limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    const rows = page.data.map((d) => [
      el("span", { class: "mono" }, d.eventType),
      el("span", { class: "mono" }, d.url),
      el("span", { class: `delivery-${d.status}` }, d.status),
      d.attempts.length ? el("ul", { class: "plain" }, ...d.attempts.map((a) => el("li", {}, attemptText(a)))) : "None yet",
      when(d.createdAt),
      ...(ctx.canWrite
        ? [
            d.status === "PENDING"
              ? ""
              : actionButton(
                  "Redeliver",
                  async () => {
                    await post(`/webhooks/deliveries/${d.id}/redeliver`);
                    polls = 0;
                    await reload();
                  },
                  { "aria-label": `Redeliver ${d.eventType} to ${d.url}` },
                ),
          ]
        : []),
    ]);
    box.replaceChildren(
      table(
        `Webhook deliveries (${ctx.mode})`,
        ["Event", "Endpoint", "Status", "Attempts", "Created", ...(ctx.canWrite ? ["Actions"] : [])],
        rows,
        `No ${ctx.mode} delivery yet.`,
      ),
      nextPageLink(ctx, "/developers", "deliveriesCursor", page.nextCursor) ?? "",
    );
    // A delivery in flight finishes within seconds: read again a few times so its outcome shows.
    if (page.data.some((d) => d.status === "PENDING") && polls++ < 10 && box.isConnected) setTimeout(() => void reload(), 1_000);
  };
  return {
    element: box,
    reload: () => {
      polls = 0;
      return reload();
    },
  };
}
