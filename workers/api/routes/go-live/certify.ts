import type { OpenAPIHono } from "@hono/zod-openapi";
import { certifyTenant } from "../../../../shared/go-live/go-live-verbs.ts";
import { liveLiquidityFromWallets } from "../../../../shared/go-live/live-liquidity.ts";
import { iso } from "../../../../shared/schemas/common.ts";
import { CertifiedSchema } from "../../../../shared/schemas/go-live.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

export const route = defineRoute(
  { auth: "JWT", roles: ["OWNER"], errors: [409] },
  {
    method: "post",
    path: "/v1/go-live/certify",
    operationId: "goLive.certify",
    tags: ["Go live"],
    summary: "Certify the tenant for live",
    description:
      'When all 10 go-live steps are DONE, records the certification (`certifiedAt`) and answers `mode: "live"`. Otherwise 409 whose message names the first incomplete step and what it needs. Certifying again answers the first `certifiedAt`. The tenant\'s OWNER only.',
    responses: { 200: { description: "Certified", content: { "application/json": { schema: CertifiedSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, chain, clock } = c.get("deps");
    const certified = await certifyTenant(
      { db, liveLiquidity: liveLiquidityFromWallets({ db, chain }) },
      { tenantId: c.get("principal").tenant.id, now: clock.now() },
    );
    return c.json({ mode: certified.mode, certifiedAt: iso(certified.certifiedAt) }, 200);
  });
