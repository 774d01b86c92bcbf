import { del, get, post } from "../api.ts";
import type { PageOf } from "../configuration/types.ts";
import { confirmButton } from "../confirm-button.ts";
import type { Ctx } from "../context.ts";
import { el, table, when } from "../dom.ts";
import { field, form, input, select } from "../forms.ts";
import { nextPageLink, shownOnce } from "./shown-once.ts";
import type { ApiKey, CreatedApiKey } from "./types.ts";

/**
 * API keys (`/v1/api-keys`, Owner/Admin only: a MEMBER gets 403, so the
 * section says so instead of a list): create with a name and mode, the key
 * shown once with a copy button, the list (never the secrets) with who
 * created each key, revoke.
 */
export async function apiKeysSection(ctx: Ctx): Promise<HTMLElement> {
  const box = el("div", { class: "api-keys" });
  if (!ctx.canWrite) {
    box.append(el("p", { class: "notice" }, "API keys are managed by owners and admins."));
    return box;
  }
  const cursor = ctx.query.get("keysCursor");
  const keys = await get<PageOf<ApiKey>>(`/api-keys?limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
  const live = ctx.me.tenant.certifiedAt !== null;
  const secretSlot = el("div");
  const list = el("div");
  const renderList = (page: PageOf<ApiKey>): void =>
    list.replaceChildren(
      table(
        "API keys",
        ["Name", "Prefix", "Mode", "Created", "Created by", "State"],
        page.data.map((k) => [
          k.name,
          el("span", { class: "mono" }, `${k.prefix}…`),
          k.mode,
          when(k.createdAt),
          // Null: its creator has since been removed from the team, or no dashboard user made it.
          k.createdBy ? k.createdBy.email : el("span", { class: "hint" }, "No current user"),
          k.revokedAt ? `Revoked ${when(k.revokedAt)}` : revokeButton(k),
        ]),
        "No API key yet.",
      ),
      nextPageLink(ctx, "/developers", "keysCursor", page.nextCursor) ?? "",
    );
  const revokeButton = (k: ApiKey): HTMLElement =>
    confirmButton(
      "Revoke",
      `Confirm: revoke "${k.name}"`,
      async () => renderList(await del(`/api-keys/${k.id}`).then(() => get<PageOf<ApiKey>>("/api-keys?limit=20"))),
      { "aria-label": `Revoke ${k.name}` },
    );
  renderList(keys);
  const create = form(
    { label: "New API key", submit: "Create key" },
    [
      field("name", "Key name", input({}), "1 to 100 characters, to tell keys apart."),
      field(
        "mode",
        "Key mode",
        select(
          [
            { value: "sandbox", label: "Sandbox (svc_test_…)" },
            { value: "live", label: "Live (svc_live_…)" },
          ],
          {},
          ctx.mode,
        ),
        live ? "A key acts in its mode only." : "A key acts in its mode only. Live keys can be made once the tenant is certified.",
      ),
    ],
    async (data) => {
      const created = await post<CreatedApiKey>("/api-keys", { name: String(data.get("name") ?? ""), mode: String(data.get("mode") ?? "sandbox") });
      secretSlot.replaceChildren(shownOnce(`API key "${created.name}":`, created.key));
      renderList(await get<PageOf<ApiKey>>("/api-keys?limit=20"));
    },
  );
  box.append(create, secretSlot, list);
  return box;
}
