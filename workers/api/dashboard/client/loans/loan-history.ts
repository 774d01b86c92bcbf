import { el, table, when } from "../dom.ts";
import { txLink } from "./loan-bits.ts";
import type { Delivery, LoanEvent, Settlement } from "./types.ts";

const section = (id: string, title: string, ...content: (Node | null)[]) => el("section", { "aria-labelledby": id }, el("h2", { id }, title), ...content);

/** The loan's events, oldest first (the API lists newest first, in commit order). */
export function timelineSection(events: LoanEvent[], more: boolean): HTMLElement {
  const ordered = [...events].reverse();
  return section(
    "timeline-title",
    "Timeline",
    ordered.length === 0
      ? el("p", { class: "empty" }, "No events yet.")
      : el(
          "ol",
          { class: "timeline", "aria-label": "Events, oldest first" },
          ...ordered.map((e) => el("li", { "data-event": e.type }, el("span", { class: "mono" }, e.type), ` · ${when(e.createdAt)}`)),
        ),
    more ? el("p", { class: "hint" }, "Only the latest 100 events are shown; the event log under Developers has them all.") : null,
  );
}

/** Every money movement of the loan with its transaction. */
export function settlementsSection(rows: Settlement[]): HTMLElement {
  return section(
    "settlements-title",
    "Settlements",
    table(
      "Money movements, oldest first",
      ["Kind", "Status", "Amount", "Transaction", "Block", "When"],
      rows.map((s) => [
        s.kind,
        s.status,
        `${s.amount} ${s.asset}`,
        txLink(s.chain, s.txHash),
        s.blockNumber === null ? "—" : String(s.blockNumber),
        when(s.createdAt),
      ]),
      "No money has moved for this loan.",
    ),
  );
}

/** The webhook deliveries of the loan's events, with each attempt's outcome. */
export function deliveriesSection(rows: Delivery[]): HTMLElement {
  return section(
    "deliveries-title",
    "Webhook deliveries",
    table(
      "Deliveries of this loan's events, newest first",
      ["Event", "Endpoint", "Status", "Attempts", "Created"],
      rows.map((d) => [
        d.eventType,
        el("span", { class: "mono" }, d.url),
        d.status,
        d.attempts.length === 0 ? "none yet" : d.attempts.map((a) => `#${a.attempt}: ${a.responseStatus ?? a.error ?? "running"}`).join("; "),
        when(d.createdAt),
      ]),
      "No webhook deliveries for this loan (no endpoint was subscribed to its events).",
    ),
  );
}
