import type { OpenAPIHono } from "@hono/zod-openapi";
import { readSandboxClock } from "../../../../shared/sandbox/sandbox-clock.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { SandboxClockSchema } from "./schemas.ts";

export const route = defineRoute(
  { auth: "KEY", mode: "sandbox", errors: [403] },
  {
    method: "get",
    path: "/v1/sandbox/clock",
    operationId: "sandbox.clock.get",
    tags: ["Sandbox"],
    summary: "Read the sandbox clock",
    description: [
      "The tenant's sandbox clock. Every tenant-facing time of a sandbox loan (loan `dueAt`, overdue and default, late fees, event times, KYC stamps) is read from this clock, which runs `offsetSeconds` ahead of real time; `POST /v1/sandbox/clock/advance` moves it forward. It never moves back.",
      "Sandbox API keys only (`svc_test_…`): a live key gets 403. A certified tenant keeps its sandbox; the sandbox clock runs sandbox loans only, never live ones.",
    ].join("\n\n"),
    responses: { 200: { description: "The clock", content: { "application/json": { schema: SandboxClockSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, clock } = c.get("deps");
    const read = await readSandboxClock({ db, clock }, { tenantId: c.get("principal").tenant.id });
    return c.json({ now: read.now.toISOString(), offsetSeconds: read.offsetMs / 1000 }, 200);
  });
