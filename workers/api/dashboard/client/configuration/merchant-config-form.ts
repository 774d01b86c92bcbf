import { post, put } from "../api.ts";
import type { Ctx } from "../context.ts";
import { el } from "../dom.ts";
import { field, form, input, select } from "../forms.ts";
import type { Fee, MerchantConfig } from "./types.ts";

/**
 * The create / edit form of a merchant configuration. The hints are the
 * rules of `POST|PUT /v1/merchant-configs` as its OpenAPI description states
 * them; the form checks nothing itself: what the API refuses comes back as
 * its message beside the field it names (`tenures: 5 is not one of 3, 7, 15`).
 */
const RAILS = [
  { network: "TON", stablecoin: "USDT" },
  { network: "POLYGON", stablecoin: "USDC" },
  { network: "BASE", stablecoin: "USDC" },
];
const FEE_TYPES = [
  { value: "FIXED", label: "Fixed (stablecoin units)" },
  { value: "PERCENTAGE", label: "Percentage of the principal" },
];

/** A fee's type and value as one field: the API names both `processingFee.type` and `processingFee.value` under `processingFee`. */
function feeField(name: "processingFee" | "lateFee", label: string, fee: Fee | undefined, hint: string): HTMLElement {
  const id = `f-${name}`;
  return el(
    "fieldset",
    { class: "field fee", "data-field": name },
    el("legend", {}, label),
    el("p", { id: `${id}-hint`, class: "hint" }, hint),
    el("label", { for: `${id}-type` }, "Type"),
    select(FEE_TYPES, { id: `${id}-type`, name: `${name}.type`, "aria-describedby": `${id}-hint ${id}-error` }, fee?.type ?? "PERCENTAGE"),
    el("label", { for: `${id}-value` }, "Value"),
    input({ id: `${id}-value`, name: `${name}.value`, inputmode: "decimal", value: fee?.value ?? "0.00", "aria-describedby": `${id}-hint ${id}-error` }),
    el("p", { id: `${id}-error`, class: "field-error", role: "alert", hidden: true }),
  );
}

/** "3, 7 15" → [3, 7, 15]; what is not a number goes as sent, for the API to name. */
const tenuresOf = (text: string): unknown[] =>
  text
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((t) => (/^-?\d+$/.test(t) ? Number(t) : t));

const numberOrRaw = (text: string): unknown => (/^-?\d+$/.test(text.trim()) ? Number(text.trim()) : text);

export function merchantConfigForm(ctx: Ctx, existing: MerchantConfig | null): HTMLFormElement {
  const rail = existing ? `${existing.network}/${existing.stablecoin}` : "POLYGON/USDC";
  const fields = [
    field(
      "network",
      "Rail (network and stablecoin)",
      select(
        RAILS.map((r) => ({ value: `${r.network}/${r.stablecoin}`, label: `${r.network} · ${r.stablecoin}` })),
        {},
        rail,
      ),
      "Exactly one rail per configuration: TON/USDT, POLYGON/USDC or BASE/USDC.",
    ),
    field(
      "tenures",
      "Tenures (days)",
      input({ value: (existing?.tenures ?? [3, 7, 15]).join(", "), inputmode: "numeric" }),
      "A non-empty subset of 3, 7, 15 (days), without repeats, separated by commas.",
    ),
    field(
      "minTicket",
      "Minimum ticket",
      input({ value: existing?.minTicket ?? "10.00", inputmode: "decimal" }),
      "Smallest loan, greater than 0 and at most the maximum ticket. At most 2 decimals.",
    ),
    field(
      "maxTicket",
      "Maximum ticket",
      input({ value: existing?.maxTicket ?? "1000.00", inputmode: "decimal" }),
      "Largest loan, at most the product cap of 1000.00. At most 2 decimals.",
    ),
    field(
      "gracePeriodDays",
      "Grace period (days)",
      input({ value: String(existing?.gracePeriodDays ?? 3), inputmode: "numeric" }),
      "Days after the due date before auto-default: 0 to 30.",
    ),
    feeField(
      "processingFee",
      "Processing fee",
      existing?.processingFee,
      "FIXED: stablecoin units, at most 1000.00; PERCENTAGE: percent, at most 100. At most 2 decimals.",
    ),
    feeField("lateFee", "Late fee", existing?.lateFee, "FIXED: stablecoin units, at most 1000.00; PERCENTAGE: percent, at most 100. At most 2 decimals."),
  ];
  const label = existing ? `Edit configuration ${existing.network} · ${existing.stablecoin}` : "New merchant configuration";
  return form({ label, submit: existing ? "Save configuration" : "Create configuration" }, fields, async (data) => {
    const [network, stablecoin] = String(data.get("network")).split("/");
    const body = {
      network,
      stablecoin,
      tenures: tenuresOf(String(data.get("tenures") ?? "")),
      minTicket: String(data.get("minTicket") ?? ""),
      maxTicket: String(data.get("maxTicket") ?? ""),
      gracePeriodDays: numberOrRaw(String(data.get("gracePeriodDays") ?? "")),
      processingFee: { type: data.get("processingFee.type"), value: String(data.get("processingFee.value") ?? "") },
      lateFee: { type: data.get("lateFee.type"), value: String(data.get("lateFee.value") ?? "") },
    };
    if (existing) await put(`/merchant-configs/${existing.id}`, body);
    else await post("/merchant-configs", body);
    ctx.navigate(`/configuration?saved=${existing ? "config" : "new-config"}`);
  });
}
