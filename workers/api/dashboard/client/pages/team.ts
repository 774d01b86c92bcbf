import { get, post } from "../api.ts";
import type { PageOf } from "../configuration/types.ts";
import type { Ctx, Page } from "../context.ts";
import { nextPageLink } from "../developers/shown-once.ts";
import { el, pageSection, table, when } from "../dom.ts";
import { field, form, input, select } from "../forms.ts";

/**
 * Team: the tenant's dashboard users and their roles (`GET /v1/users`), and
 * (Owner/Admin) adding one with a role (`POST /v1/users`). What each role
 * may do is said once, here, as the API enforces it.
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
      ["E-mail", "Role", "Since"],
      users.data.map((u) => [u.email, u.role, when(u.createdAt)]),
    ),
    nextPageLink(ctx, "/team", "cursor", users.nextCursor),
    addForm ? [el("h2", {}, "Add a user"), addForm] : el("p", { class: "hint" }, "Owners and admins add users."),
  );
}

export const teamPage: Page = { path: "/team", title: "Team", nav: "Team", render };
