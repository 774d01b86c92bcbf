import type { MiddlewareHandler } from "hono";
import { relayAfterRequest } from "../../../shared/webhooks/relay-after-commit.ts";
import type { AppEnv } from "../context.ts";

/**
 * After a write by an authenticated caller, relay that tenant's new events
 * to the deliveries Queue at once (the cron relay is the safety net), one
 * pass per tenant at a time however many writes commit together
 * (shared/webhooks/relay-after-commit.ts). In a
 * worker it runs after the response (`waitUntil`); where there is no
 * execution context (the Bun tier) it runs before returning.
 */
export const relayAfterWrite: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  const principal = c.get("principal");
  if (c.req.method === "GET" || !principal) return;
  await relayAfterRequest(c.get("deps"), { tenantId: principal.tenant.id, executionCtx: () => c.executionCtx, failure: "relay after write failed" });
};
