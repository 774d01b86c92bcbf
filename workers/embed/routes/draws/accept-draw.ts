import type { OpenAPIHono } from "@hono/zod-openapi";
import { defineEmbedRoute } from "../embed-route.ts";
import { acceptDraw } from "../../../../shared/embed/draw.ts";
import { embedLoanView } from "../../../../shared/embed/program-loans.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import { relayAfterRequest } from "../../../../shared/webhooks/relay-after-commit.ts";
import type { EmbedAppEnv } from "../../env.ts";
import { EMBED_ERRORS, json, KeyParams } from "../params.ts";
import { AcceptBodySchema, EmbedLoanResponseSchema } from "../schemas.ts";
import { widgetHostsOf } from "../widget-hosts.ts";
import { ACCEPT_EXAMPLE } from "../examples.ts";

export const route = defineEmbedRoute(
  {
    method: "post",
    path: "/v1/embed/{embedKey}/accept",
    operationId: "embed.accept",
    summary: "Accept a draw with the signed agreement",
    description: `Creates the loan through the same path as POST /v1/loans (underwriting, idempotency, funding, events), recording the program and channel. The challenge must exist for this program, be bound to exactly this wallet, amount and tenure, be unexpired and unused. The signature must be the wallet's over its message: EVM EIP-191 personal_sign (and smart-contract wallets: ERC-1271 isValidSignature when deployed, an ERC-6492-wrapped signature when counterfactual, on chains whose adapter can call the chain; the simulated sandbox chains execute no contracts, so there a contract wallet's signature is 400), Solana ed25519 (base58 or base64), or TON Connect signData text (with publicKey, timestamp, domain; the key must belong to the address as a v4 or v5 wallet). Otherwise 400 and no loan. The challenge is consumed by the first accept that verifies, before the credit-line and KYC checks: an accept refused after it (KYC still required: 409; the amount must fit what the wallet's credit line has available: 400 naming amount and what is available, since the signer proved control of the wallet) leaves it used, and the borrower quotes again. The signed message and signature (with the TON fields) are kept with the loan, immutably (the merchant's GET /v1/loans/{id} shows them as \`agreement\`). Idempotency keys of draws are their own key space per program and wallet: a draw never finds or blocks a merchant's POST /v1/loans loan, or another wallet's, whatever key it sends. A retried accept with the same idempotency key and the wallet's signature answers 200 with its loan. The loan is shown as GET …/loans/:loanId shows it, without the merchant's fields. ${EMBED_ERRORS}`,
    request: { params: KeyParams, ...json(AcceptBodySchema, ACCEPT_EXAMPLE) },
    responses: {
      201: { description: "The loan", content: { "application/json": { schema: EmbedLoanResponseSchema } } },
      200: { description: "The loan a retried accept made", content: { "application/json": { schema: EmbedLoanResponseSchema } } },
    },
  },
  { errors: [409] },
);

export const register = (app: OpenAPIHono<EmbedAppEnv>) =>
  app.openapi(route, async (c) => {
    const program = c.get("program");
    const deps = c.get("deps");
    const now = () => tenantClock(deps.clock, program.tenant, program.mode).now();
    const { loan, created } = await acceptDraw(
      { db: deps.db, challenges: deps.challenges, writer: deps.writer, widgetHosts: widgetHostsOf(c), chain: deps.chain, liveChains: deps.liveChains },
      { ...c.req.valid("json"), program, now: now() },
    );
    // The draw's events go out at once (the cron relay is the safety net).
    await relayAfterRequest(deps, { tenantId: program.tenant.id, executionCtx: () => c.executionCtx, failure: "relay after accept failed" });
    return c.json({ loan: embedLoanView(loan, now()) }, created ? 201 : 200);
  });
