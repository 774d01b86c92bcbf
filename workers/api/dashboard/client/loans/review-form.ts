import { post } from "../api.ts";
import { el } from "../dom.ts";
import { showError } from "../forms.ts";
import type { Loan } from "./types.ts";

/**
 * Approve or reject a MANUAL_REVIEW loan with a note (`POST
 * /v1/loans/:id/review`): the API records the reviewer and the note, and
 * refuses a second review (409) or a MEMBER (403); its message shows here.
 * Ids carry the loan's id, so a queue of forms has no duplicates.
 */
export function reviewForm(loan: Loan, onDone: (reviewed: Loan) => void): HTMLFormElement {
  const id = `note-${loan.id}`;
  const note = el("textarea", { id, name: "note", rows: 2, maxlength: 2000, "aria-describedby": `${id}-error` });
  const status = el("p", { class: "form-status", role: "status" });
  const general = el("p", { class: "form-error", role: "alert", hidden: true });
  const approve = el("button", { type: "submit", value: "APPROVE" }, "Approve");
  const reject = el("button", { type: "submit", value: "REJECT", class: "danger" }, "Reject");
  const f = el(
    "form",
    { "aria-label": `Review loan ${loan.id}`, class: "review-form", novalidate: true },
    general,
    el(
      "div",
      { class: "field", "data-field": "note" },
      el("label", { for: id }, "Review note"),
      note,
      el("p", { id: `${id}-error`, class: "field-error", role: "alert", hidden: true }),
    ),
    el("div", { class: "actions" }, approve, reject, status),
  );
  f.addEventListener("submit", async (event) => {
    event.preventDefault();
    const action = ((event as SubmitEvent).submitter as HTMLButtonElement | null)?.value === "REJECT" ? "REJECT" : "APPROVE";
    for (const p of f.querySelectorAll<HTMLElement>(".field-error, .form-error")) {
      p.hidden = true;
      p.textContent = "";
    }
    approve.disabled = reject.disabled = true;
    status.textContent = action === "APPROVE" ? "Approving…" : "Rejecting…";
    try {
      const reviewed = await post<Loan>(`/loans/${encodeURIComponent(loan.id)}/review`, { action, note: note.value.trim() || null });
      status.textContent = action === "APPROVE" ? "Approved." : "Rejected.";
      onDone(reviewed);
    } catch (error) {
      status.textContent = "";
      showError(f, error);
      approve.disabled = reject.disabled = false;
    }
  });
  return f;
}
