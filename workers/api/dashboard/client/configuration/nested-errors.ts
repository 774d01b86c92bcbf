import { ApiError } from "../api.ts";

/**
 * The shared form helper places a message by its first path segment
 * (`branding.primaryColor: …` → "branding"); a form whose fields are nested
 * marks each error slot's wrapper with `data-path` and runs its action
 * through this, so the message lands beside the exact field. The messages
 * placed here are removed from the error the form then shows; the API's
 * text is shown unchanged.
 */
export async function placingNestedErrors(f: HTMLElement, action: () => Promise<void>): Promise<void> {
  try {
    await action();
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    const rest: string[] = [];
    for (const message of error.messages) {
      const path = /^([A-Za-z0-9_.]+):/.exec(message)?.[1];
      const wrapper = path ? f.querySelector<HTMLElement>(`[data-path="${CSS.escape(path)}"]`) : null;
      const slot = wrapper?.querySelector<HTMLElement>(".field-error");
      if (!wrapper || !slot) {
        rest.push(message);
        continue;
      }
      slot.textContent = slot.textContent ? `${slot.textContent} ${message}` : message;
      slot.hidden = false;
      wrapper.querySelector("input, select, textarea")?.setAttribute("aria-invalid", "true");
    }
    // Still an error, so the form does not say "Saved."; an empty list shows nothing more.
    throw new ApiError(error.status, rest);
  }
}

/** Marks a field (from `field()`) with its full API path, for `placingNestedErrors`. */
export function withPath(fieldEl: HTMLElement, path: string): HTMLElement {
  fieldEl.dataset.path = path;
  return fieldEl;
}
