import type { Ctx, Page } from "../context.ts";
import { apiKeysSection } from "../developers/api-keys.ts";
import { deliveriesSection } from "../developers/deliveries.ts";
import { eventsSection } from "../developers/events.ts";
import { webhooksSection } from "../developers/webhooks.ts";
import { el, pageSection } from "../dom.ts";

/**
 * Developers: API keys, webhook endpoints with their deliveries and a test
 * event, the event log, and the API reference. Webhooks, deliveries and
 * events are those of the mode the dashboard looks at (the header switch).
 */
async function render(ctx: Ctx): Promise<HTMLElement> {
  const deliveries = deliveriesSection(ctx);
  const [keys, webhooks, events] = await Promise.all([
    apiKeysSection(ctx),
    webhooksSection(ctx, () => void deliveries.reload()),
    eventsSection(ctx),
    deliveries.reload(),
  ]);
  return pageSection(
    "Developers",
    el(
      "p",
      {},
      "The full API reference, with every route's rules and shapes: ",
      el("a", { href: "/docs", target: "_blank", rel: "noopener" }, "API reference (/docs, opens in a new tab)"),
      ".",
    ),
    ctx.query.get("webhookDeleted") ? el("p", { class: "notice", role: "status" }, "Webhook endpoint deleted.") : null,
    el("h2", {}, "API keys"),
    keys,
    el("h2", {}, "Webhooks"),
    webhooks,
    el("h2", {}, "Deliveries"),
    deliveries.element,
    el("h2", {}, "Event log"),
    events,
  );
}

export const developersPage: Page = { path: "/developers", title: "Developers", nav: "Developers", render };
