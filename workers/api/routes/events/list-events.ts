import type { OpenAPIHono } from "@hono/zod-openapi";
import { modeScope } from "../../../../shared/auth/principal.ts";
import { listEvents } from "../../../../shared/events/list-events.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { EventPageSchema, ListEventsQuerySchema } from "./schemas.ts";

export const route = defineRoute(
  { auth: "KEY_OR_JWT" },
  {
    method: "get",
    path: "/v1/events",
    operationId: "events.list",
    tags: ["Events"],
    summary: "List events",
    description: [
      "The tenant's events from the durable outbox, newest first, each as the envelope webhooks deliver: `{ id, type, createdAt, tenantId, mode, data, program, channel }`. An event is recorded in the same database batch as the change that causes it, so whatever the API shows has its events here.",
      "Order is the outbox's commit order, not `createdAt`: the events of one loan appear in the order their changes committed (for a new loan, newest first: `loan.funded` above `loan.decision` above `loan.application_submitted`), even within one millisecond.",
      'Modes (DECISIONS.md "Modes"): an API key sees only its own mode\'s events (`mode` naming the other one: 403); a dashboard session sees both, or one with `mode`.',
      "Filters: `type` (one of the 13 event types of SPEC.md) and `loanId` (another tenant's loan id simply matches nothing); `limit` 1 to 100 (default 20); `cursor` is the previous page's `nextCursor` (opaque; null on the last page). Events recorded after the first page was read never shift later pages.",
    ].join("\n\n"),
    request: { query: ListEventsQuerySchema },
    responses: { 200: { description: "A page of events", content: { "application/json": { schema: EventPageSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const principal = c.get("principal");
    const { mode, ...query } = c.req.valid("query");
    const page = await listEvents(c.get("deps"), { tenantId: principal.tenant.id, ...query, mode: modeScope(principal, mode) ?? undefined });
    return c.json(page, 200);
  });
