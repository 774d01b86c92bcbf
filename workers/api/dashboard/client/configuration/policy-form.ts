import { put } from "../api.ts";
import type { Ctx } from "../context.ts";
import { el, table, when } from "../dom.ts";
import { field, form, input } from "../forms.ts";
import type { Policy } from "./types.ts";

/**
 * The underwriting policy (`GET|PUT /v1/policies`): the version in force,
 * its rules in evaluation order, the form that saves a new version, and the
 * history of versions (`GET /v1/policies/versions`: what each said, who saved
 * it, when), the versions loans' `decision.policyVersion` name.
 */
const nullIfBlank = (text: string): string | null => (text.trim() === "" ? null : text.trim());

export function policySection(ctx: Ctx, policy: Policy, versions: (Policy & { createdBy: string })[]): HTMLElement[] {
  const summary = el(
    "p",
    { class: "notice" },
    `Version ${policy.version} in force`,
    policy.createdAt ? ` since ${when(policy.createdAt)}` : " (the default policy: it approves every loan)",
    ". Every save makes a new version; loans already decided keep the version that decided them.",
  );
  const rules = table(
    "Rules, in evaluation order",
    ["#", "Rule", "Effect", "What it does"],
    policy.rules.map((r) => [String(r.order), el("span", { class: "mono" }, r.code), r.effect, r.description]),
  );
  const history = el(
    "details",
    {},
    el("summary", {}, "History of versions"),
    table(
      "Policy versions, newest first",
      ["Version", "Saved", "By", "KYC required", "Review above", "Open loans cap", "Blocked wallets"],
      versions.map((v) => [
        String(v.version),
        when(v.createdAt),
        el("span", { class: "mono" }, v.createdBy),
        v.requireKycVerified ? "yes" : "no",
        v.manualReviewAbove ?? "—",
        v.maxOpenLoansPerBorrower === null ? "—" : String(v.maxOpenLoansPerBorrower),
        String(v.blockedWallets.length),
      ]),
    ),
  );
  if (!ctx.canWrite) return [summary, rules, history];
  const kyc = el("input", { type: "checkbox", checked: policy.requireKycVerified });
  const fields = [
    field("requireKycVerified", "Decline borrowers whose KYC is not VERIFIED", kyc),
    field(
      "manualReviewAbove",
      "Send to manual review above",
      input({ value: policy.manualReviewAbove ?? "", inputmode: "decimal" }),
      "A principal strictly above this amount goes to MANUAL_REVIEW; at most 2 decimals. Empty: never.",
    ),
    field(
      "maxOpenLoansPerBorrower",
      "Maximum open loans per borrower",
      input({ value: policy.maxOpenLoansPerBorrower === null ? "" : String(policy.maxOpenLoansPerBorrower), inputmode: "numeric" }),
      "An integer from 1 to 1000. Empty: no cap.",
    ),
    field(
      "blockedWallets",
      "Blocked wallets",
      el("textarea", { rows: 3 }, policy.blockedWallets.join("\n")),
      "One address per line, of any chain (EVM 0x…, TON EQ…/UQ…/0:…, Solana base58); at most 1000.",
    ),
  ];
  const f = form({ label: "Underwriting policy", submit: "Save as a new version" }, fields, async (data) => {
    const max = nullIfBlank(String(data.get("maxOpenLoansPerBorrower") ?? ""));
    await put("/policies", {
      requireKycVerified: data.get("requireKycVerified") !== null,
      manualReviewAbove: nullIfBlank(String(data.get("manualReviewAbove") ?? "")),
      // Sent as typed when it is not an integer, so the API names the problem.
      maxOpenLoansPerBorrower: max === null ? null : /^-?\d+$/.test(max) ? Number(max) : max,
      blockedWallets: String(data.get("blockedWallets") ?? "")
        .split("\n")
        .map((w) => w.trim())
        .filter(Boolean),
    });
    ctx.navigate("/configuration?saved=policy");
  });
  return [summary, rules, history, f];
}
