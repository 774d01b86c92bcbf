import { put } from "../api.ts";
import type { Ctx } from "../context.ts";
import { el } from "../dom.ts";
import { field, form, input } from "../forms.ts";
import { brandingPreview } from "./branding-preview.ts";
import { placingNestedErrors, withPath } from "./nested-errors.ts";
import type { Settings, WidgetProgram } from "./types.ts";

/**
 * Settings and branding (`GET|PUT /v1/settings`, a full replacement) with
 * the widget's preview beside them: saving reloads the preview, which shows
 * the branding the borrower now sees. The hints are the route's rules.
 */
const nullIfBlank = (text: FormDataEntryValue | null): string | null => {
  const s = String(text ?? "").trim();
  return s === "" ? null : s;
};

export function settingsSection(ctx: Ctx, settings: Settings, programs: WidgetProgram[]): HTMLElement[] {
  const preview = brandingPreview(ctx, programs);
  const b = settings.branding;
  if (!ctx.canWrite) {
    const rows: [string, string][] = [
      ["KYC before funding", settings.requiresKycBeforeFunding ? "Required" : "Not required"],
      ["Company name", b.companyName],
      ["Logo URL", b.logoUrl ?? "—"],
      ["Primary color", b.primaryColor ?? "—"],
      ["Support e-mail", b.supportEmail ?? "—"],
      ["Terms URL", b.termsUrl ?? "—"],
    ];
    return [el("dl", { class: "facts" }, ...rows.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)])), preview.element];
  }
  const fields = [
    field(
      "requiresKycBeforeFunding",
      "Require the borrower's KYC before a loan is funded",
      el("input", { type: "checkbox", checked: settings.requiresKycBeforeFunding }),
    ),
    withPath(
      field("brandingCompanyName", "Company name", input({ value: b.companyName }), "1 to 200 characters; the widget's heading."),
      "branding.companyName",
    ),
    withPath(
      field("brandingLogoUrl", "Logo URL", input({ type: "url", value: b.logoUrl ?? "" }), "An https URL of at most 2048 characters. Empty clears it."),
      "branding.logoUrl",
    ),
    withPath(
      field("brandingPrimaryColor", "Primary color", input({ value: b.primaryColor ?? "" }), "#RRGGBB, e.g. #1A2B3C. Empty clears it (the widget's default)."),
      "branding.primaryColor",
    ),
    withPath(
      field("brandingSupportEmail", "Support e-mail", input({ type: "email", value: b.supportEmail ?? "" }), "An e-mail address. Empty clears it."),
      "branding.supportEmail",
    ),
    withPath(
      field("brandingTermsUrl", "Terms URL", input({ type: "url", value: b.termsUrl ?? "" }), "An https URL of at most 2048 characters. Empty clears it."),
      "branding.termsUrl",
    ),
  ];
  const f: HTMLFormElement = form({ label: "Settings and branding", submit: "Save settings" }, fields, (data) =>
    placingNestedErrors(f, async () => {
      await put("/settings", {
        requiresKycBeforeFunding: data.get("requiresKycBeforeFunding") !== null,
        branding: {
          // Sent as typed (not trimmed to null), so an empty name is the API's 400, not a silent default.
          companyName: String(data.get("brandingCompanyName") ?? ""),
          logoUrl: nullIfBlank(data.get("brandingLogoUrl")),
          primaryColor: nullIfBlank(data.get("brandingPrimaryColor")),
          supportEmail: nullIfBlank(data.get("brandingSupportEmail")),
          termsUrl: nullIfBlank(data.get("brandingTermsUrl")),
        },
      });
      preview.reload();
    }),
  );
  return [el("div", { class: "split" }, f, el("div", {}, el("h3", {}, "Widget preview"), preview.element))];
}
