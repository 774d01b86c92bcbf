import { put } from "../api.ts";
import type { Ctx } from "../context.ts";
import { el } from "../dom.ts";
import type { WidgetProgram } from "./types.ts";

/**
 * The widget as the borrower sees it: the real widget page
 * (`{embed_url}/embed/<embedKey>`) of a sandbox program, in an iframe. The
 * widget lets itself be framed only by its program's allowed origins
 * (`frame-ancestors`), so the preview shows once this dashboard's origin is
 * among them; until then the page says so and offers to add it (an explicit
 * change of the program, shown on the Widget programs page). The dashboard's
 * CSP allows frames from the widget origin only.
 */
export function brandingPreview(ctx: Ctx, programs: WidgetProgram[]): { element: HTMLElement; reload(): void } {
  const origin = location.origin;
  const program = programs.find((p) => p.mode === "sandbox");
  const box = el("div", { class: "preview" });
  const none = { element: box, reload: () => {} };
  if (!ctx.widgetOrigin) {
    box.append(el("p", { class: "notice" }, "No widget host is configured for this deployment, so there is no preview."));
    return none;
  }
  if (!program) {
    box.append(el("p", { class: "notice" }, "Create a sandbox widget program (Widget programs) to preview the widget here."));
    return none;
  }
  if (!program.allowedOrigins.includes(origin)) {
    box.append(
      el(
        "p",
        { class: "notice" },
        `The preview frames the real widget of the sandbox program "${program.name}". The widget only lets its program's allowed origins frame it, and ${origin} (this dashboard) is not one of them.`,
      ),
    );
    if (ctx.canWrite)
      box.append(
        el(
          "button",
          {
            type: "button",
            class: "secondary",
            onclick: async () => {
              await put(`/widget-programs/${program.id}`, {
                name: program.name,
                merchantConfigId: program.merchantConfigId,
                allowedOrigins: [...program.allowedOrigins, origin],
              });
              ctx.refresh();
            },
          },
          `Allow ${origin} to frame "${program.name}"`,
        ),
      );
    return none;
  }
  const src = `${ctx.widgetOrigin}/embed/${encodeURIComponent(program.embedKey)}?channel=WEB&parent=${encodeURIComponent(origin)}`;
  const frame = el("iframe", { src, title: `Widget preview: ${program.name}`, class: "widget-preview" });
  box.append(el("p", { class: "hint" }, `The sandbox program "${program.name}" as a borrower sees it, with the saved branding.`), frame);
  return {
    element: box,
    reload: () => {
      // Assigning the same URL loads the page again: the widget reads the branding on each load.
      frame.src = src;
    },
  };
}
