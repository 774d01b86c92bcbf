import type { OpenAPIHono } from "@hono/zod-openapi";
import { goLiveStatus } from "../../../../shared/go-live/go-live-verbs.ts";
import { liveLiquidityFromWallets } from "../../../../shared/go-live/live-liquidity.ts";
import { isoOrNull } from "../../../../shared/schemas/common.ts";
import { auditView, GoLiveSchema, stepView } from "../../../../shared/schemas/go-live.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

export const route = defineRoute(
  { auth: "KEY_OR_JWT" },
  {
    method: "get",
    path: "/v1/go-live",
    operationId: "goLive.get",
    tags: ["Go live"],
    summary: "The go-live certification checklist",
    description: [
      "The 10 steps to live, evaluated in order from the tenant's current state: `KYB_APPROVED`, `COMMERCIAL_TERMS_AGREED`, `UNDERWRITING_POLICY_ACTIVE`, `LOAN_PRODUCT_ACTIVE`, `LIQUIDITY_AVAILABLE`, `WEBHOOK_CONFIGURED`, `API_KEY_ISSUED`, `OWNER_EXISTS`, `BRANDING_CONFIGURED`, `SANDBOX_CYCLE_COMPLETED`.",
      "Each step up to the first incomplete one is `DONE` (with `completedAt`), that one is `PENDING` and its `detail` says what to do next, every later step is `BLOCKED`. `nextStep` is the PENDING step's key, or null when all are DONE.",
      "`LIQUIDITY_AVAILABLE` needs a verified live DISBURSEMENT wallet (`POST /v1/wallets`, then its challenge and verify) on the live chain of an active loan product's rail, whose stablecoin balance read from the chain, less what its live pool holds reserved, covers the smallest minimum ticket of the active products on that chain. A wallet whose balance cannot be read (the chain not configured, its RPC down) does not count. Certification asserts again, in its own write, that the wallet it counted is still there.",
      "`audit`: every platform operator action on this tenant (KYB decisions, commercial terms), oldest first: who decided what and when.",
    ].join("\n\n"),
    responses: { 200: { description: "The checklist", content: { "application/json": { schema: GoLiveSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, chain } = c.get("deps");
    const status = await goLiveStatus({ db, liveLiquidity: liveLiquidityFromWallets({ db, chain }) }, { tenantId: c.get("principal").tenant.id });
    return c.json(
      {
        mode: status.mode,
        certifiedAt: isoOrNull(status.certifiedAt),
        nextStep: status.nextStep,
        steps: status.steps.map(stepView),
        audit: status.audit.map(auditView),
      },
      200,
    );
  });
