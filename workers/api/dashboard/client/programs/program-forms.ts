import { post, put } from "../api.ts";
import type { MerchantConfig, WidgetProgram } from "../configuration/types.ts";
import type { Ctx } from "../context.ts";
import { el } from "../dom.ts";
import { field, form, input, select } from "../forms.ts";

/**
 * The forms of `POST /v1/widget-programs` and `PUT /v1/widget-programs/:id`.
 * The hints are the routes' rules; the API's messages land beside the
 * fields they name (`allowedOrigins.1: …`).
 */
const ORIGINS_HINT =
  "One origin a line, exact: https://host[:port] (lowercase host, no path, no trailing slash), or http://localhost[:port] and http://127.0.0.1[:port] for local development. Up to the API's limit; empty: no page may embed the widget.";

const originsOf = (text: FormDataEntryValue | null): string[] =>
  String(text ?? "")
    .split("\n")
    .map((o) => o.trim())
    .filter(Boolean);

const configOptions = (configs: MerchantConfig[]) =>
  configs.map((c) => ({ value: c.id, label: `${c.network} · ${c.stablecoin} (${c.tenures.join(", ")} days)` }));

export function createProgramForm(ctx: Ctx, configs: MerchantConfig[]): HTMLFormElement {
  const live = ctx.me.tenant.certifiedAt !== null;
  const fields = [
    field("name", "Name", input({ value: "" }), "1 to 100 characters."),
    field("merchantConfigId", "Merchant configuration", select(configOptions(configs)), "The program lends with this configuration's rail and loan product."),
    field(
      "mode",
      "Mode",
      select(
        [
          { value: "sandbox", label: "Sandbox (ek_test_…)" },
          { value: "live", label: "Live (ek_live_…)" },
        ],
        {},
        "sandbox",
      ),
      live ? "Fixed for the program's life." : "Fixed for the program's life. Live programs can be made once the tenant is certified (Go live).",
    ),
    field("allowedOrigins", "Allowed origins", el("textarea", { rows: 3 }), ORIGINS_HINT),
  ];
  return form({ label: "New widget program", submit: "Create program" }, fields, async (data) => {
    const created = await post<WidgetProgram>("/widget-programs", {
      name: String(data.get("name") ?? ""),
      merchantConfigId: String(data.get("merchantConfigId") ?? ""),
      mode: String(data.get("mode") ?? "sandbox"),
      allowedOrigins: originsOf(data.get("allowedOrigins")),
    });
    ctx.navigate(`/programs?created=${created.id}`, { reloadMe: true });
  });
}

export function editProgramForm(ctx: Ctx, program: WidgetProgram, configs: MerchantConfig[]): HTMLFormElement {
  const fields = [
    field("name", "Name", input({ value: program.name }), "1 to 100 characters."),
    field(
      "merchantConfigId",
      "Merchant configuration",
      select(configOptions(configs), {}, program.merchantConfigId),
      "Moving the program moves it to that configuration's rail and loan product. The embed key never changes.",
    ),
    field("allowedOrigins", "Allowed origins", el("textarea", { rows: 4 }, program.allowedOrigins.join("\n")), ORIGINS_HINT),
  ];
  return form({ label: `Edit ${program.name}`, submit: "Save program" }, fields, async (data) => {
    await put(`/widget-programs/${program.id}`, {
      name: String(data.get("name") ?? ""),
      merchantConfigId: String(data.get("merchantConfigId") ?? ""),
      allowedOrigins: originsOf(data.get("allowedOrigins")),
    });
    ctx.navigate("/programs?saved=1", { reloadMe: true });
  });
}
