import type { OpenAPIHono } from "@hono/zod-openapi";
import { ADMIN_ROLES } from "../../../../shared/auth/principal.ts";
import { submitKyb } from "../../../../shared/go-live/go-live-verbs.ts";
import { KybBodySchema, KybSubmissionSchema, kybView } from "../../../../shared/schemas/go-live.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

const EXAMPLE = {
  legalName: "Acme Pay Ltd",
  registrationNumber: "HRB 123456",
  country: "DE",
  documents: [
    { kind: "certificate_of_incorporation", fileName: "incorporation.pdf", sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" },
  ],
};

export const route = defineRoute(
  { auth: "JWT", roles: ADMIN_ROLES, errors: [409] },
  {
    method: "post",
    path: "/v1/go-live/kyb",
    operationId: "goLive.submitKyb",
    tags: ["Go live"],
    summary: "Submit business verification (KYB)",
    description: [
      "Submits the business verification the platform operator decides (go-live step 1). Documents are references (kind, file name, SHA-256 of the file), not uploads. `country`: ISO 3166-1 alpha-2.",
      "The new submission supersedes an earlier SUBMITTED or REJECTED one; once the KYB is APPROVED, submitting again is 409.",
    ].join("\n\n"),
    request: { body: { required: true, content: { "application/json": { schema: KybBodySchema, example: EXAMPLE } } } },
    responses: { 201: { description: "Submitted, awaiting the operator's decision", content: { "application/json": { schema: KybSubmissionSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const principal = c.get("principal");
    const { db, clock } = c.get("deps");
    const submittedBy = principal.kind === "user" ? `user:${principal.userId}` : `apiKey:${principal.apiKeyId}`;
    const row = await submitKyb({ db }, { tenantId: principal.tenant.id, submittedBy, kyb: c.req.valid("json"), now: clock.now() });
    return c.json(kybView(row), 201);
  });
