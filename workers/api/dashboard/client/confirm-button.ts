import { el } from "./dom.ts";

/**
 * A button for an action that cannot be undone (revoke, delete): the first
 * click asks (the label changes to `confirm`), the second acts. A failure
 * shows the API's message beside the button.
 */
export function confirmButton(label: string, confirm: string, action: () => Promise<void>, attrs: { "aria-label"?: string } = {}): HTMLElement {
  const status = el("span", { role: "status" });
  const button = el("button", { type: "button", class: "danger", ...attrs }, label);
  button.addEventListener("click", async () => {
    if (button.dataset.armed !== "1") {
      button.dataset.armed = "1";
      button.textContent = confirm;
      button.removeAttribute("aria-label");
      return;
    }
    button.disabled = true;
    try {
      await action();
    } catch (error) {
      status.textContent = error instanceof Error ? error.message : String(error);
      button.disabled = false;
    }
  });
  return el("span", { class: "actions" }, button, status);
}

/**
 * A button for an action that needs no confirmation (redeliver, mark read):
 * disabled while it runs; a failure shows the API's message beside it (a
 * refused redelivery showed nothing before, and failed as an uncaught page
 * error).
 */
export function actionButton(label: string, action: () => Promise<void>, attrs: { "aria-label"?: string; class?: string } = {}): HTMLElement {
  const status = el("span", { role: "status" });
  const button = el("button", { type: "button", class: "secondary", ...attrs }, label);
  button.addEventListener("click", async () => {
    button.disabled = true;
    status.textContent = "";
    try {
      await action();
    } catch (error) {
      status.textContent = error instanceof Error ? error.message : String(error);
    } finally {
      button.disabled = false;
    }
  });
  return el("span", { class: "actions" }, button, status);
}
