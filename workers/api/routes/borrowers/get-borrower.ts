import type { OpenAPIHono } from "@hono/zod-openapi";
import { getBorrower } from "../../../../shared/borrowers/borrower-verbs.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { BorrowerParamSchema, BorrowerSchema, borrowerView } from "./schemas.ts";

export const route = defineRoute(
  { auth: "KEY_OR_JWT" },
  {
    method: "get",
    path: "/v1/borrowers/{id}",
    operationId: "borrowers.get",
    tags: ["Borrowers"],
    summary: "Get a borrower with its KYC audit trail",
    description: [
      "`{id}` is the borrower's id or your `borrowerRef` (URL-encoded): the id is tried first, then the ref, both within your tenant only. A borrower is created on first use, by a loan or by `PATCH /v1/borrowers/{id}/kyc`.",
      "Returns the KYC status, `verifiedAt` (stamped by the service on every KYC update) and `merchantUserId`, with the immutable audit trail of every update (from, to, `merchantUserId`, the API key or user that made it, when), oldest first. The service stores only these outcomes and references, never identity documents.",
      "An unknown borrower, or another tenant's: 404.",
    ].join("\n\n"),
    request: { params: BorrowerParamSchema },
    responses: { 200: { description: "The borrower", content: { "application/json": { schema: BorrowerSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const found = await getBorrower(c.get("deps"), { tenantId: c.get("principal").tenant.id, idOrRef: c.req.valid("param").id });
    return c.json(borrowerView(found), 200);
  });
