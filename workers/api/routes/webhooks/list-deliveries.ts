import type { OpenAPIHono } from "@hono/zod-openapi";
import { modeScope } from "../../../../shared/auth/principal.ts";
import { pageOf } from "../../../../shared/schemas/common.ts";
import { listDeliveries } from "../../../../shared/webhooks/delivery-history.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { DeliverySchema, deliveryView, ListDeliveriesQuerySchema } from "./schemas.ts";

export const route = defineRoute(
  { auth: "KEY_OR_JWT" },
  {
    method: "get",
    path: "/v1/webhooks/deliveries",
    operationId: "webhooks.deliveries.list",
    tags: ["Webhooks"],
    summary: "Delivery history",
    description: [
      "The tenant's webhook deliveries, newest first: one per event and subscribed endpoint, plus manual redeliveries (`redeliveryOf`). Each has its event id and type, endpoint and URL, `status` (`PENDING` while attempts remain, then `SUCCEEDED` or `FAILED`) and every attempt so far (start and finish time, duration, the endpoint's HTTP status or the network error or timeout).",
      "A delivery fails on a non-2xx answer, a network error or no answer within 10 seconds; there are 3 attempts in all. Deliveries to deleted endpoints stay listed.",
      "Filters: `endpointId`, `status`, `eventType`, `loanId` (the deliveries of that loan's events; another tenant's loan matches nothing); `limit` 1 to 100 (default 20) and `cursor` (the previous page's `nextCursor`).",
    ].join("\n\n"),
    request: { query: ListDeliveriesQuerySchema },
    responses: {
      200: { description: "A page of deliveries", content: { "application/json": { schema: pageOf(DeliverySchema).openapi("WebhookDeliveryPage") } } },
    },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const principal = c.get("principal");
    const { mode, ...query } = c.req.valid("query");
    const page = await listDeliveries(c.get("deps"), { tenantId: principal.tenant.id, ...query, mode: modeScope(principal, mode) ?? undefined });
    return c.json({ data: page.data.map(deliveryView), nextCursor: page.nextCursor }, 200);
  });
