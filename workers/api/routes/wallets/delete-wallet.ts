import type { OpenAPIHono } from "@hono/zod-openapi";
import { ADMIN_ROLES } from "../../../../shared/auth/principal.ts";
import { IdParamSchema } from "../../../../shared/schemas/common.ts";
import { deleteWallet } from "../../../../shared/wallets/wallet-verbs.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

export const route = defineRoute(
  { auth: "JWT", roles: ADMIN_ROLES },
  {
    method: "delete",
    path: "/v1/wallets/{id}",
    operationId: "wallets.delete",
    tags: ["Wallets"],
    summary: "Remove a live wallet",
    description:
      "Soft-deletes the wallet: it leaves `GET /v1/wallets`, answers 404 from then on, and its gas alert stops. The same address may be added again (unverified). Deleting it again, or another tenant's id: 404.",
    request: { params: IdParamSchema },
    responses: { 204: { description: "Wallet removed" } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, clock } = c.get("deps");
    await deleteWallet({ db }, { tenantId: c.get("principal").tenant.id, id: c.req.valid("param").id, now: clock.now() });
    return c.body(null, 204);
  });
