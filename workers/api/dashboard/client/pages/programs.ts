import { del, get } from "../api.ts";
import type { MerchantConfig, PageOf, WidgetProgram } from "../configuration/types.ts";
import { confirmButton } from "../confirm-button.ts";
import type { Ctx, Page } from "../context.ts";
import { el, pageSection, table, when } from "../dom.ts";
import { createProgramForm, editProgramForm } from "../programs/program-forms.ts";
import { snippets } from "../programs/snippet.ts";

/**
 * Widget programs: each program's embed key, mode, rail and allowed
 * origins, the `<script>` snippet per channel to paste, and (Owner/Admin)
 * create, edit (`?edit=<id>`) and delete. One form at a time, so field ids
 * stay unique.
 */
const deleteButton = (ctx: Ctx, program: WidgetProgram) =>
  confirmButton(
    "Delete",
    `Confirm: delete "${program.name}" (its embed key stops working)`,
    async () => {
      await del(`/widget-programs/${program.id}`);
      ctx.navigate("/programs?deleted=1", { reloadMe: true });
    },
    { "aria-label": `Delete ${program.name}` },
  );

async function render(ctx: Ctx): Promise<HTMLElement> {
  const cursor = ctx.query.get("cursor");
  const [programs, configs] = await Promise.all([
    get<PageOf<WidgetProgram>>(`/widget-programs?limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`),
    get<PageOf<MerchantConfig>>("/merchant-configs?limit=100"),
  ]);
  const editing = programs.data.find((p) => p.id === ctx.query.get("edit")) ?? null;
  const notice = ctx.query.get("created")
    ? "Program created."
    : ctx.query.get("saved")
      ? "Program saved."
      : ctx.query.get("deleted")
        ? "Program deleted."
        : null;

  const rows = programs.data.map((p) => [
    p.name,
    p.mode === "live" ? "Live" : "Sandbox",
    el("span", { class: "mono" }, p.embedKey),
    `${p.network} · ${p.stablecoin}`,
    p.allowedOrigins.length ? el("ul", { class: "plain" }, ...p.allowedOrigins.map((o) => el("li", { class: "mono" }, o))) : "None: no page may embed it",
    when(p.createdAt),
    ...(ctx.canWrite
      ? [el("span", { class: "actions" }, el("a", { href: `/dashboard/programs?edit=${p.id}`, "aria-label": `Edit ${p.name}` }, "Edit"), deleteButton(ctx, p))]
      : []),
  ]);
  const headers = ["Name", "Mode", "Embed key", "Rail", "Allowed origins", "Created", ...(ctx.canWrite ? ["Actions"] : [])];

  return pageSection(
    "Widget programs",
    notice ? el("p", { class: "notice", role: "status" }, notice) : null,
    el("p", { class: "hint" }, "Paste a program's snippet where the widget should appear; the page's origin must be one of the program's allowed origins."),
    table("Widget programs", headers, rows, "No widget program yet."),
    programs.nextCursor ? el("a", { href: `/dashboard/programs?cursor=${encodeURIComponent(programs.nextCursor)}` }, "Next page") : null,
    el("h2", {}, "Embed snippets"),
    ...programs.data.map((p) => snippets(ctx.widgetOrigin, p)),
    editing && ctx.canWrite ? [el("h2", {}, `Edit ${editing.name}`), editProgramForm(ctx, editing, configs.data)] : null,
    !editing && ctx.canWrite ? [el("h2", {}, "New program"), createProgramForm(ctx, configs.data)] : null,
  );
}

export const programsPage: Page = { path: "/programs", title: "Widget programs", nav: "Widget programs", render };
