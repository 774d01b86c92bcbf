import type { OpenAPIHono } from "@hono/zod-openapi";
import { poolView, setSandboxLiquidity } from "../../../../shared/sandbox/sandbox-liquidity.ts";
import { toUnits } from "../../../../shared/schemas/money.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { SetLiquidityBodySchema, SetLiquidityResultSchema } from "./schemas.ts";

export const route = defineRoute(
  { auth: "KEY", mode: "sandbox", errors: [403] },
  {
    method: "put",
    path: "/v1/sandbox/liquidity",
    operationId: "sandbox.liquidity.set",
    tags: ["Sandbox"],
    summary: "Set the sandbox liquidity pool",
    description: [
      "Sets the balance (`available`, reservations included) of the tenant's own sandbox pool for `stablecoin` (default USDC), creating the pool if the tenant has none (from then on the tenant's loans in that stablecoin draw on it, not on a shared pool), and optionally its `lowThreshold`. Signup gives every tenant a USDC pool and a USDT pool of 100000.00 each, with a threshold of 1000.00. Headroom = available − reserved is what new loans draw on.",
      "`available` may not fall under what is currently reserved for loans being funded: 400 naming `available`. Set it to 0 to exercise the no-liquidity path: an approved loan then stays CREATED with `fundingState` AWAITING_LIQUIDITY and fires `loan.funding_failed` and `liquidity.unavailable`.",
      "Before answering, funding is retried for the tenant's approved loans still waiting to be funded, oldest first (up to 100 per call), so a loan that was waiting for liquidity is ACTIVE when this returns if the new headroom covers it. `funded` counts the loans retried; `stillWaiting` those still waiting for liquidity after the retry.",
      "`liquidity.low` fires once when headroom falls under the threshold (by a reservation, or by this call); setting headroom back at or above the threshold re-arms it.",
      "Sandbox API keys only (`svc_test_…`): a live key gets 403. A certified tenant keeps its sandbox pools; this never sets a live pool (live liquidity is the DISBURSEMENT wallet's on-chain balance).",
    ].join("\n\n"),
    request: { body: { required: true, content: { "application/json": { schema: SetLiquidityBodySchema } } } },
    responses: {
      200: { description: "The pool after the change and the funding retry", content: { "application/json": { schema: SetLiquidityResultSchema } } },
    },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, clock, writer } = c.get("deps");
    const body = c.req.valid("json");
    const result = await setSandboxLiquidity(
      { db, writer, clock },
      {
        tenantId: c.get("principal").tenant.id,
        stablecoin: body.stablecoin,
        available: toUnits(body.available),
        lowThreshold: body.lowThreshold === undefined ? undefined : toUnits(body.lowThreshold),
      },
    );
    return c.json({ pool: poolView(result.pool), funded: result.retried.visited, stillWaiting: result.stillWaiting }, 200);
  });
