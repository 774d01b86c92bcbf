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
