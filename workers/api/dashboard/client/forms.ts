import { ApiError } from "./api.ts";
import { type Attrs, el } from "./dom.ts";

/**
 * A labelled field whose errors show beside it: `input` gets an id, a label,
 * and an error slot the form fills from the API's message naming the field
 * (`aria-describedby`, `aria-invalid`).
 */
export function field(name: string, label: string, control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement, hint?: string): HTMLElement {
  const id = `f-${name.replace(/[^a-z0-9]/gi, "-")}`;
  control.id = id;
  control.name = name;
  const errorId = `${id}-error`;
  const hintId = hint ? `${id}-hint` : null;
  control.setAttribute("aria-describedby", [hintId, errorId].filter(Boolean).join(" "));
  return el(
    "div",
    { class: "field", "data-field": name },
    el("label", { for: id }, label),
    hint ? el("p", { id: hintId, class: "hint" }, hint) : null,
    control,
    el("p", { id: errorId, class: "field-error", role: "alert", hidden: true }),
  );
}

export const input = (attrs: Attrs = {}) => el("input", { type: "text", ...attrs });

export function select(options: { value: string; label: string }[], attrs: Attrs = {}, selected?: string): HTMLSelectElement {
  return el("select", attrs, ...options.map((o) => el("option", { value: o.value, selected: o.value === selected }, o.label)));
}

/**
 * A form that submits through `action`: the submit button is disabled while
 * it runs (with a status), and an ApiError is shown beside each field it
 * names, or at the top of the form otherwise.
 */
export function form(attrs: { label: string; submit: string }, fields: HTMLElement[], action: (data: FormData) => Promise<void>): HTMLFormElement {
  const status = el("p", { class: "form-status", role: "status" });
  const general = el("p", { class: "form-error", role: "alert", hidden: true });
  const button = el("button", { type: "submit" }, attrs.submit);
  const f = el("form", { "aria-label": attrs.label, novalidate: true }, general, ...fields, el("div", { class: "actions" }, button, status));
  f.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearErrors(f);
    button.disabled = true;
    status.textContent = "Working…";
    try {
      await action(new FormData(f));
      status.textContent = "Saved.";
    } catch (error) {
      status.textContent = "";
      showError(f, error);
    } finally {
      button.disabled = false;
    }
  });
  return f;
}

function clearErrors(f: HTMLFormElement): void {
  for (const p of f.querySelectorAll<HTMLElement>(".field-error, .form-error")) {
    p.hidden = true;
    p.textContent = "";
  }
  for (const c of f.querySelectorAll("[aria-invalid]")) c.removeAttribute("aria-invalid");
}

/** Puts the API's messages beside the fields they name; the rest at the top. */
export function showError(f: HTMLElement, error: unknown): void {
  const messages = error instanceof ApiError ? error.messages : [error instanceof Error ? error.message : String(error)];
  const unplaced: string[] = [];
  for (const message of messages) {
    const name = /^([A-Za-z0-9_.[\]]+):/.exec(message)?.[1]?.split(/[.[]/)[0];
    const slot = name ? f.querySelector<HTMLElement>(`[data-field="${CSS.escape(name)}"] .field-error`) : null;
    if (slot) {
      slot.textContent = slot.textContent ? `${slot.textContent} ${message}` : message;
      slot.hidden = false;
      slot.parentElement?.querySelector("input, select, textarea")?.setAttribute("aria-invalid", "true");
    } else unplaced.push(message);
  }
  const general = f.querySelector<HTMLElement>(".form-error");
  if (general && unplaced.length > 0) {
    general.textContent = unplaced.join(" ");
    general.hidden = false;
  }
}
