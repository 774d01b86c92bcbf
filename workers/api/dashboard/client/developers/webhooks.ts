import { del, get, post } from "../api.ts";
import type { PageOf } from "../configuration/types.ts";
import { confirmButton } from "../confirm-button.ts";
import type { Ctx } from "../context.ts";
import { el, table, when } from "../dom.ts";
import { field, form, input } from "../forms.ts";
import { nextPageLink, shownOnce } from "./shown-once.ts";
import type { CreatedWebhookEndpoint, WebhookEndpoint } from "./types.ts";

/**
 * Webhook endpoints of the mode the dashboard looks at (`/v1/webhooks?mode=`):
 * register (the signing secret shown once), delete, and send a test event
 * (`POST /v1/webhooks/:id/test`), whose delivery then shows under
 * Deliveries. The hints are the route's rules.
 */
export async function webhooksSection(ctx: Ctx, onDelivered: () => void): Promise<HTMLElement> {
  const cursor = ctx.query.get("webhooksCursor");
  const page = await get<PageOf<WebhookEndpoint>>(`/webhooks?mode=${ctx.mode}&limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
  const secretSlot = el("div");
  const testStatus = el("p", { class: "form-status", role: "status" });
  const actions = (w: WebhookEndpoint): HTMLElement =>
    el(
      "span",
      { class: "actions" },
      el(
        "button",
        {
          type: "button",
          class: "secondary",
          "aria-label": `Send a test event to ${w.url}`,
          onclick: async () => {
            testStatus.textContent = "Sending a test event…";
            try {
              await post(`/webhooks/${w.id}/test`);
              testStatus.textContent = `Test event sent to ${w.url}: its delivery is listed below.`;
              onDelivered();
            } catch (error) {
              testStatus.textContent = error instanceof Error ? error.message : String(error);
            }
          },
        },
        "Send test event",
      ),
      confirmButton(
        "Delete",
        `Confirm: delete ${w.url}`,
        async () => {
          await del(`/webhooks/${w.id}`);
          ctx.navigate("/developers?webhookDeleted=1");
        },
        { "aria-label": `Delete ${w.url}` },
      ),
    );
  const rows = page.data.map((w) => [
    w.pausedUntil
      ? el("span", {}, el("span", { class: "mono" }, w.url), el("br"), el("strong", {}, `Paused until ${when(w.pausedUntil)}: it kept timing out.`))
      : el("span", { class: "mono" }, w.url),
    w.events.join(", "),
    el("span", { class: "mono" }, `${w.secretPrefix}…`),
    when(w.createdAt),
    ...(ctx.canWrite ? [actions(w)] : []),
  ]);
  const box = el(
    "div",
    {},
    secretSlot,
    table(
      `Webhook endpoints (${ctx.mode})`,
      ["URL", "Events", "Secret", "Registered", ...(ctx.canWrite ? ["Actions"] : [])],
      rows,
      `No ${ctx.mode} webhook endpoint yet.`,
    ),
    nextPageLink(ctx, "/developers", "webhooksCursor", page.nextCursor),
    testStatus,
  );
  if (!ctx.canWrite) return box;
  const register = form(
    { label: "Register a webhook endpoint", submit: "Register endpoint" },
    [
      field(
        "url",
        "Endpoint URL",
        input({ type: "url", placeholder: "https://hooks.example.com/svc" }),
        "https to a public host, at most 2048 characters, no credentials (local runs also accept http://127.0.0.1:<port> and http://localhost:<port>).",
      ),
      field("events", "Events", input({ value: "*" }), 'Event types separated by commas (e.g. loan.funded, loan.repaid), or "*" for every event.'),
    ],
    async (data) => {
      const created = await post<CreatedWebhookEndpoint>("/webhooks", {
        url: String(data.get("url") ?? ""),
        events: String(data.get("events") ?? "")
          .split(/[\s,]+/)
          .filter(Boolean),
        mode: ctx.mode,
      });
      const fresh = await webhooksSection(ctx, onDelivered);
      fresh.prepend(shownOnce(`Signing secret of ${created.url}:`, created.secret));
      box.replaceWith(fresh);
    },
  );
  box.append(el("h3", {}, `Register a ${ctx.mode} endpoint`), register);
  return box;
}
