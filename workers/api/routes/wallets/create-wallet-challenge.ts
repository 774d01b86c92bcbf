import type { OpenAPIHono } from "@hono/zod-openapi";
import { ADMIN_ROLES } from "../../../../shared/auth/principal.ts";
import { IdParamSchema } from "../../../../shared/schemas/common.ts";
import { createWalletChallenge } from "../../../../shared/wallets/proof-of-control.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { WalletChallengeSchema } from "./schemas.ts";

export const route = defineRoute(
  { auth: "JWT", roles: ADMIN_ROLES },
  {
    method: "post",
    path: "/v1/wallets/{id}/challenge",
    operationId: "wallets.createChallenge",
    tags: ["Wallets"],
    summary: "Ask for a proof-of-control challenge",
    description:
      "A single-use challenge, valid 5 minutes: a human-readable `message` naming the tenant, chain, role, address, challenge id and expiry. Sign it with the wallet (EIP-191 `personal_sign` on POLYGON and BASE; TON Connect `signData` with a `text` payload on TON) and send the signature to `POST /v1/wallets/{id}/verify`. A deleted wallet or another tenant's id: 404.",
    request: { params: IdParamSchema },
    responses: { 201: { description: "The challenge", content: { "application/json": { schema: WalletChallengeSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, clock } = c.get("deps");
    const { tenant } = c.get("principal");
    // The real time, not the sandbox clock: a real wallet signs it, and TON signatures are dated by the wallet.
    const challenge = await createWalletChallenge({ db }, { tenant, id: c.req.valid("param").id, now: clock.now() });
    return c.json({ id: challenge.id, message: challenge.message, expiresAt: challenge.expiresAt.toISOString() }, 201);
  });
