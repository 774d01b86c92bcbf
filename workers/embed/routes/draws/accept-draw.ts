import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { acceptDraw, CHANNELS } from "../../../../shared/embed/draw.ts";
import { loanView } from "../../../../shared/loans/loan-view.ts";
import { safeErrorFields } from "../../../../shared/observability/logger.ts";
import { AmountSchema } from "../../../../shared/schemas/money.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import { relayOutbox } from "../../../../shared/webhooks/relay-outbox.ts";
import type { EmbedAppEnv } from "../../env.ts";
import { EMBED_ERRORS, json, KeyParams } from "../params.ts";

const BodySchema = z.object({
  walletAddress: z.string().trim().min(1).max(128),
  amount: AmountSchema,
  tenureDays: z.number().int(),
  agreementChallengeId: z.string().min(1).max(64),
  // ERC-6492 signatures carry the wallet's factory call, so they run to a few KB.
  walletSignature: z.string().min(1).max(8192),
  channel: z.enum(CHANNELS).default("WEB"),
  idempotencyKey: z.string().min(1).max(255).optional(),
  publicKey: z.string().min(1).max(128).optional().openapi({ description: "TON Connect: the wallet's public key" }),
  timestamp: z.number().int().optional().openapi({ description: "TON Connect signData: the signature's timestamp (unix seconds)" }),
  domain: z.string().min(1).max(255).optional().openapi({ description: "TON Connect signData: the domain the wallet signed for" }),
});

export const route = createRoute({
  method: "post",
  path: "/v1/embed/{embedKey}/accept",
  summary: "Accept a draw with the signed agreement",
  description: `Creates the loan through the same path as POST /v1/loans (underwriting, idempotency, funding, events), recording the program and channel. The challenge must exist for this program, be bound to exactly this wallet, amount and tenure, be unexpired and unused. The signature must be the wallet's over its message: EVM EIP-191 personal_sign (and smart-contract wallets: ERC-1271 isValidSignature when deployed, an ERC-6492-wrapped signature when counterfactual, on chains whose adapter can call the chain; the simulated sandbox chains execute no contracts, so there a contract wallet's signature is 400), Solana ed25519 (base58 or base64), or TON Connect signData text (with publicKey, timestamp, domain; the key must belong to the address as a v4 or v5 wallet). Otherwise 400 and no loan. The challenge is consumed by the first accept that verifies, before the credit-line and KYC checks: an accept refused after it (KYC still required: 409; the line's available amount: 400) leaves it used, and the borrower quotes again. The signed message and signature (with the TON fields) are kept with the loan, immutably (the merchant's GET /v1/loans/{id} shows them as \`agreement\`). A retried accept with the same idempotency key answers 200 with its loan. ${EMBED_ERRORS}`,
  request: { params: KeyParams, ...json(BodySchema) },
  responses: {
    201: { description: "The loan", content: { "application/json": { schema: z.object({ loan: z.object({ id: z.string() }).passthrough() }) } } },
    200: { description: "The loan a retried accept made", content: { "application/json": { schema: z.object({ loan: z.object({ id: z.string() }).passthrough() }) } } },
  },
});

export const register = (app: OpenAPIHono<EmbedAppEnv>) =>
  app.openapi(route, async (c) => {
    const ctx = c.get("program");
    const deps = c.get("deps");
    const now = () => tenantClock(deps.clock, ctx.tenant).now();
    const { loan, created } = await acceptDraw({ db: deps.db, store: deps.challenges, writer: deps.loans, widgetHosts: [new URL(c.req.url).host, ...(deps.widgetHost ? [deps.widgetHost] : [])], chain: deps.chain }, ctx, c.req.valid("json"), now());
    // The draw's events go out at once (the cron relay is the safety net).
    const relay = relayOutbox(deps.db, deps.queue, { now: deps.clock.now(), tenantId: ctx.tenant.id }).catch((err) => deps.log.error("relay after accept failed", safeErrorFields(err)));
    try {
      c.executionCtx.waitUntil(relay);
    } catch {
      await relay;
    }
    return c.json({ loan: loanView(loan, now()) }, created ? 201 : 200);
  });
