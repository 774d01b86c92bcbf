import { EVENT_TYPES } from "../../../../../shared/domain/vocabularies.ts";
import { get } from "../api.ts";
import type { PageOf } from "../configuration/types.ts";
import type { Ctx } from "../context.ts";
import { el, table, when } from "../dom.ts";
import { field, select } from "../forms.ts";
import { nextPageLink } from "./shown-once.ts";
import type { EventEnvelope } from "./types.ts";

/**
 * The event log (`GET /v1/events`) of the mode the dashboard looks at,
 * newest first, filtered by type (`?type=`), paginated with the API's
 * cursor (`?eventsCursor=`).
 */

const summary = (e: EventEnvelope): string => {
  const loan = e.data.loan as { id?: string; status?: string } | undefined;
  return loan?.id ? `Loan ${loan.id.slice(0, 8)}… ${loan.status ?? ""}`.trim() : "";
};

export async function eventsSection(ctx: Ctx): Promise<HTMLElement> {
  const type = ctx.query.get("type") ?? "";
  const cursor = ctx.query.get("eventsCursor");
  const q = new URLSearchParams({ mode: ctx.mode, limit: "20" });
  if (type) q.set("type", type);
  if (cursor) q.set("cursor", cursor);
  const page = await get<PageOf<EventEnvelope>>(`/events?${q}`);
  const filter = el(
    "form",
    {
      "aria-label": "Filter events",
      class: "actions",
      onsubmit: (event: Event) => {
        event.preventDefault();
        const chosen = new FormData(event.target as HTMLFormElement).get("type");
        const next = new URLSearchParams(ctx.query);
        next.delete("eventsCursor");
        if (chosen) next.set("type", String(chosen));
        else next.delete("type");
        ctx.navigate(`/developers?${next}`);
      },
    },
    field("type", "Event type", select([{ value: "", label: "Every type" }, ...EVENT_TYPES.map((t) => ({ value: t, label: t }))], {}, type)),
    el("button", { type: "submit", class: "secondary" }, "Filter"),
  );
  return el(
    "div",
    {},
    filter,
    table(
      `Events (${ctx.mode})`,
      ["Type", "When", "About", "Channel", "Event id"],
      page.data.map((e) => [el("span", { class: "mono" }, e.type), when(e.createdAt), summary(e), e.channel ?? "—", el("span", { class: "mono" }, e.id)]),
      type ? `No ${type} event in ${ctx.mode}.` : `No ${ctx.mode} event yet.`,
    ),
    nextPageLink(ctx, "/developers", "eventsCursor", page.nextCursor),
  );
}
