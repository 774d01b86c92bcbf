import { post } from "../api.ts";
import { el } from "../dom.ts";
import { showError } from "../forms.ts";
import type { Unmatched } from "./types.ts";

/**
 * Attribute an unmatched payment to a loan (`POST
 * /v1/settlements/unmatched/:id/attribute`, Owner/Admin): the API checks the
 * loan (same chain, ACTIVE or DEFAULTED, not attributed twice) and its
 * message shows beside the field. Ids carry the payment's id.
 */
export function attributeForm(payment: Unmatched, onDone: () => void): HTMLFormElement {
  const id = `attribute-${payment.id}`;
  const loanId = el("input", { id, name: "loanId", type: "text", autocomplete: "off", value: payment.claimedLoanId ?? "", "aria-describedby": `${id}-error` });
  const button = el("button", { type: "submit" }, "Attribute");
  const status = el("p", { class: "form-status", role: "status" });
  const f = el(
    "form",
    { "aria-label": `Attribute payment ${payment.txHash}`, novalidate: true },
    el("p", { class: "form-error", role: "alert", hidden: true }),
    el(
      "div",
      { class: "field", "data-field": "loanId" },
      el("label", { for: id }, "Loan id"),
      loanId,
      el("p", { id: `${id}-error`, class: "field-error", role: "alert", hidden: true }),
    ),
    el("div", { class: "actions" }, button, status),
  );
  f.addEventListener("submit", async (event) => {
    event.preventDefault();
    for (const p of f.querySelectorAll<HTMLElement>(".field-error, .form-error")) {
      p.hidden = true;
      p.textContent = "";
    }
    button.disabled = true;
    status.textContent = "Attributing…";
    try {
      await post(`/settlements/unmatched/${encodeURIComponent(payment.id)}/attribute`, { loanId: loanId.value.trim() });
      status.textContent = "Attributed.";
      onDone();
    } catch (error) {
      status.textContent = "";
      showError(f, error);
      button.disabled = false;
    }
  });
  return f;
}
