import { get } from "../api.ts";
import { merchantConfigForm } from "../configuration/merchant-config-form.ts";
import { policySection } from "../configuration/policy-form.ts";
import { settingsSection } from "../configuration/settings-form.ts";
import type { MerchantConfig, PageOf, Policy, Settings, WidgetProgram } from "../configuration/types.ts";
import type { Ctx, Page } from "../context.ts";
import { el, pageSection, table, when } from "../dom.ts";

/**
 * Configuration: the merchant configurations (rail, tenures, tickets, grace,
 * fees), the underwriting policy, and settings and branding with the
 * widget's preview. One form per kind at a time (`?edit=<id>` or `?edit=new`
 * opens the configuration form), so field ids stay unique on the page.
 */
const SAVED: Record<string, string> = {
  config: "Configuration saved.",
  "new-config": "Configuration created.",
  policy: "New policy version saved.",
};

async function render(ctx: Ctx): Promise<HTMLElement> {
  const cursor = ctx.query.get("cursor");
  const [configs, policy, versions, settings, programs] = await Promise.all([
    get<PageOf<MerchantConfig>>(`/merchant-configs?limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`),
    get<Policy>("/policies"),
    get<PageOf<Policy & { createdBy: string }>>("/policies/versions?limit=20"),
    get<Settings>("/settings"),
    get<PageOf<WidgetProgram>>("/widget-programs?limit=100"),
  ]);
  const editing = ctx.query.get("edit");
  const current = editing && editing !== "new" ? (configs.data.find((c) => c.id === editing) ?? null) : null;
  const saved = SAVED[ctx.query.get("saved") ?? ""];

  const rows = configs.data.map((c) => [
    `${c.network} · ${c.stablecoin}`,
    el("span", { class: "mono" }, c.chain),
    c.tenures.join(", "),
    `${c.minTicket} – ${c.maxTicket}`,
    String(c.gracePeriodDays),
    `${c.processingFee.value} ${c.processingFee.type === "PERCENTAGE" ? "%" : "fixed"}`,
    `${c.lateFee.value} ${c.lateFee.type === "PERCENTAGE" ? "%" : "fixed"}`,
    when(c.updatedAt),
    ...(ctx.canWrite
      ? [el("a", { href: `/dashboard/configuration?edit=${c.id}`, "aria-label": `Edit ${c.network} · ${c.stablecoin} (${c.id.slice(0, 8)})` }, "Edit")]
      : []),
  ]);
  const headers = ["Rail", "Chain", "Tenures (days)", "Tickets", "Grace (days)", "Processing fee", "Late fee", "Updated", ...(ctx.canWrite ? ["Actions"] : [])];
  const configForm = ctx.canWrite && editing && (editing === "new" || current) ? merchantConfigForm(ctx, current) : null;

  return pageSection(
    "Configuration",
    saved ? el("p", { class: "notice", role: "status" }, saved) : null,
    el("h2", {}, "Merchant configurations"),
    el("p", { class: "hint" }, "Each configuration is one rail with its loan product; changes apply at once to the widget and to loans created by API."),
    table("Merchant configurations", headers, rows, "No configuration yet."),
    configs.nextCursor ? el("a", { href: `/dashboard/configuration?cursor=${encodeURIComponent(configs.nextCursor)}` }, "Next page") : null,
    ctx.canWrite && !configForm ? el("p", {}, el("a", { href: "/dashboard/configuration?edit=new" }, "New configuration")) : null,
    configForm ? el("h3", {}, current ? "Edit configuration" : "New configuration") : null,
    configForm,
    el("h2", {}, "Underwriting policy"),
    ...policySection(ctx, policy, versions.data),
    el("h2", {}, "Settings and branding"),
    ...settingsSection(ctx, settings, programs.data),
  );
}

export const configurationPage: Page = { path: "/configuration", title: "Configuration", nav: "Configuration", render };
