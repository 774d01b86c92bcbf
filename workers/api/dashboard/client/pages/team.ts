import { del, get, patch, post, session } from "../api.ts";
import type { PageOf } from "../configuration/types.ts";
import type { Ctx, Page } from "../context.ts";
import { confirmButton } from "../confirm-button.ts";
import { nextPageLink } from "../developers/shown-once.ts";
import { el, pageSection, table, when } from "../dom.ts";
import { field, form, input, select } from "../forms.ts";

/**
 * Team: the tenant's dashboard users and their roles (`GET /v1/users`);
 * (Owner/Admin) adding one with a role (`POST /v1/users`), changing a role
 * (`PATCH /v1/users/:id`) and removing a user (`DELETE /v1/users/:id`); and
 * for everyone, changing one's own password (`POST /v1/auth/password`). What
 * each role may do is said once, here, as the API enforces it.
 */
type User = { id: string; email: string; role: "OWNER" | "ADMIN" | "MEMBER"; createdAt: string };

const ROLES = [
  { value: "MEMBER", label: "Member: reads everything, changes nothing" },
  { value: "ADMIN", label: "Admin: everything but adding owners" },
  { value: "OWNER", label: "Owner: everything (only an owner may add one)" },
];

async function render(ctx: Ctx): Promise<HTMLElement> {
  const cursor = ctx.query.get("cursor");
  const users = await get<PageOf<User>>(`/users?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
  const added = ctx.query.get("added");
  const addForm = ctx.canWrite
    ? form(
        { label: "Add a user", submit: "Add user" },
        [
          field("email", "E-mail", input({ type: "email", autocomplete: "off" })),
          field(
            "password",
            "Initial password",
            input({ type: "password", autocomplete: "new-password" }),
            "Share it with them privately; they log in with it.",
          ),
          field("role", "Role", select(ROLES, {}, "MEMBER")),
        ],
        async (data) => {
          const user = await post<User>("/users", {
            email: String(data.get("email") ?? ""),
            password: String(data.get("password") ?? ""),
            role: data.get("role"),
          });
          ctx.navigate(`/team?added=${encodeURIComponent(user.email)}`);
        },
      )
    : null;
  return pageSection(
    "Team",
    added ? el("p", { class: "notice", role: "status" }, `${added} was added.`) : null,
    el("p", {}, `You are ${ctx.me.principal.email} (${ctx.me.principal.role}).`),
    table(
      "Users",
      ctx.canWrite ? ["E-mail", "Role", "Since", "Manage"] : ["E-mail", "Role", "Since"],
      users.data.map((u) => (ctx.canWrite ? [u.email, u.role, when(u.createdAt), manage(ctx, u)] : [u.email, u.role, when(u.createdAt)])),
    ),
    nextPageLink(ctx, "/team", "cursor", users.nextCursor),
    addForm ? [el("h2", {}, "Add a user"), addForm] : el("p", { class: "hint" }, "Owners and admins add users."),
    el("h2", {}, "Your password"),
    passwordForm(ctx),
  );
}

/** A user's role (a select and a button) and removal (confirmed); the API refuses what the caller's role may not do. */
function manage(ctx: Ctx, u: User): HTMLElement {
  const role = select(ROLES, { "aria-label": `Role of ${u.email}` }, u.role);
  const status = el("span", { role: "status" });
  const change = el("button", { type: "button", class: "secondary" }, "Change role");
  change.addEventListener("click", async () => {
    try {
      await patch(`/users/${u.id}`, { role: role.value });
      // The caller's own role may be the one changed: the header, and which actions show, follow it.
      await ctx.reload();
    } catch (error) {
      status.textContent = error instanceof Error ? error.message : String(error);
    }
  });
  const remove = confirmButton(
    "Remove",
    `Confirm: remove ${u.email}`,
    async () => {
      await del(`/users/${u.id}`);
      ctx.refresh();
    },
    { "aria-label": `Remove ${u.email}` },
  );
  return el("div", { class: "actions" }, role, change, remove, status);
}

/** Changes the caller's password; the answer's new session replaces this one (every other session ends). */
function passwordForm(ctx: Ctx): HTMLElement {
  return form(
    { label: "Change your password", submit: "Change password" },
    [
      field("currentPassword", "Current password", input({ type: "password", autocomplete: "current-password" })),
      field("newPassword", "New password", input({ type: "password", autocomplete: "new-password" }), "At least 12 characters. Your other sessions end."),
    ],
    async (data) => {
      const changed = await post<{ accessToken: string }>("/auth/password", {
        currentPassword: String(data.get("currentPassword") ?? ""),
        newPassword: String(data.get("newPassword") ?? ""),
      });
      session.set(changed.accessToken);
      ctx.refresh();
    },
  );
}

export const teamPage: Page = { path: "/team", title: "Team", nav: "Team", render };
