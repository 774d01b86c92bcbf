import type { OpenAPIHono } from "@hono/zod-openapi";
import { advanceSandboxClock } from "../../../../shared/sandbox/sandbox-clock.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { AdvanceClockBodySchema, AdvancedClockSchema } from "./schemas.ts";

export const route = defineRoute(
  { auth: "KEY", mode: "sandbox", errors: [403, 409] },
  {
    method: "post",
    path: "/v1/sandbox/clock/advance",
    operationId: "sandbox.clock.advance",
    tags: ["Sandbox"],
    summary: "Move the sandbox clock forward",
    description: [
      "Moves the tenant's sandbox clock `seconds` forward (1 to 400 days per call; concurrent calls add up), so merchants can run the scenario Overdue and default of SPEC.md without waiting days.",
      "Before answering, payments already on the tenant's sandbox ledgers are credited (at their own time: a repayment made before a deadline never makes its loan overdue), then the overdue/default sweep runs for this tenant's sandbox loans on the new time, so its events are already in the outbox (`GET /v1/events`) and on the loans: an ACTIVE loan past `dueAt` fires `loan.overdue` once and accrues its late fee per started day; past `dueAt` + the grace period it becomes DEFAULTED with `loan.defaulted` once. Advancing again never repeats those events. `swept` reports how many loans the sweep handled.",
      "Sandbox API keys only (`svc_test_…`): a live key gets 403. A certified tenant keeps its sandbox; the sandbox clock runs sandbox loans only, never live ones.",
      "The clock only moves forward, and never past 9999-12-31T23:59:59.999Z: an advance that would is refused with 409 and moves nothing.",
    ].join("\n\n"),
    request: { body: { required: true, content: { "application/json": { schema: AdvanceClockBodySchema } } } },
    responses: { 200: { description: "The clock after the move, and the sweep that ran", content: { "application/json": { schema: AdvancedClockSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const moved = await advanceSandboxClock(c.get("deps"), { tenantId: c.get("principal").tenant.id, seconds: c.req.valid("json").seconds });
    return c.json({ now: moved.now.toISOString(), offsetSeconds: moved.offsetMs / 1000, swept: moved.swept }, 200);
  });
