import { ApiError, get, patch } from "../api.ts";
import type { Ctx, Page } from "../context.ts";
import { el, pageSection, table, when } from "../dom.ts";
import { field, form, input, select } from "../forms.ts";
import { loansTable } from "../loans/loan-table.ts";
import { terms } from "../loans/loan-terms.ts";
import type { Borrower, ListPage, Loan } from "../loans/types.ts";

const KYC = ["PENDING", "VERIFIED", "FAILED"];

/**
 * A borrower (by id or your ref): its KYC status and the immutable audit
 * trail of every update (`GET /v1/borrowers/:id`), its loans, and for an
 * Owner/Admin the KYC update (`PATCH /v1/borrowers/:id/kyc`), whose
 * messages show beside the fields.
 */
export const borrowerPage: Page = {
  path: "/borrowers/:id",
  title: "Borrower",
  async render(ctx: Ctx) {
    const idOrRef = ctx.params.id ?? "";
    let borrower: Borrower;
    try {
      borrower = await get<Borrower>(`/borrowers/${encodeURIComponent(idOrRef)}`);
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 404) throw error;
      return pageSection(
        "Borrower",
        el("p", { role: "alert", class: "form-error" }, `No borrower with the ref or id “${idOrRef}”.`),
        el("p", {}, el("a", { href: "/dashboard/borrowers" }, "Find another borrower")),
      );
    }
    const loans = await get<ListPage<Loan>>(`/loans?borrowerRef=${encodeURIComponent(borrower.borrowerRef)}&mode=${ctx.mode}&limit=20`);
    return pageSection(
      "Borrower",
      terms([
        ["Ref", borrower.borrowerRef],
        ["Id", el("span", { class: "mono" }, borrower.id)],
        ["KYC status", el("strong", { "data-testid": "kyc-status" }, borrower.kyc.status)],
        ["Last KYC update", when(borrower.kyc.verifiedAt)],
        ["Checked by", borrower.kyc.merchantUserId ?? "—"],
      ]),
      ctx.canWrite ? kycForm(ctx, borrower) : null,
      el("h2", {}, "KYC audit trail"),
      table(
        "Every KYC update, oldest first",
        ["When", "From", "To", "Checked by", "Changed by"],
        borrower.kycAudit.map((a) => [when(a.createdAt), a.fromStatus, a.toStatus, a.merchantUserId ?? "—", el("span", { class: "mono" }, a.actor)]),
        "No KYC update recorded yet.",
      ),
      el("h2", {}, `${ctx.mode === "live" ? "Live" : "Sandbox"} loans`),
      loansTable("The borrower's loans, newest first", loans.data, `No ${ctx.mode} loans for this borrower.`),
    );
  },
};

function kycForm(ctx: Ctx, borrower: Borrower): HTMLElement {
  return el(
    "section",
    { "aria-labelledby": "kyc-title" },
    el("h2", { id: "kyc-title" }, "Record a KYC outcome"),
    form(
      { label: "Record a KYC outcome", submit: "Save KYC status" },
      [
        field(
          "status",
          "KYC status",
          select(
            KYC.map((s) => ({ value: s, label: s })),
            {},
            borrower.kyc.status,
          ),
        ),
        field(
          "merchantUserId",
          "Checked by",
          input({ value: ctx.me.principal.email, autocomplete: "off" }),
          "Who or what performed the check (your reference)",
        ),
      ],
      async (data) => {
        await patch(`/borrowers/${encodeURIComponent(borrower.id)}/kyc`, {
          status: data.get("status"),
          merchantUserId: String(data.get("merchantUserId") ?? ""),
        });
        ctx.refresh();
      },
    ),
  );
}
