import { type OpenAPIHono, z } from "@hono/zod-openapi";
import { OPERATOR_ACTOR } from "../../../../shared/go-live/operator-verbs.ts";
import { IdParamSchema } from "../../../../shared/schemas/common.ts";
import { installSigner } from "../../../../shared/wallets/install-signer.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

const BodySchema = z
  .object({
    chain: z.string().min(1).max(32).openapi({ description: "A live chain: POLYGON, BASE or TON" }),
    address: z.string().min(1).max(128).openapi({ description: "The DISBURSEMENT wallet's address; the key must derive it" }),
    privateKey: z
      .string()
      .min(1)
      .max(256)
      .openapi({ description: "EVM: 32-byte secp256k1 key in hex. TON: 32-byte ed25519 seed or 64-byte secret key, hex or base64. Sealed, never returned." }),
  })
  .openapi("InstallSignerRequest");

const SignerSchema = z.object({ id: z.uuid(), chain: z.string(), address: z.string() }).openapi("Signer");

export const route = defineRoute(
  { auth: "OPERATOR" },
  {
    method: "post",
    path: "/v1/operator/tenants/{id}/signers",
    operationId: "operator.tenants.installSigner",
    tags: ["Platform operator"],
    summary: "Install a tenant's DISBURSEMENT signer",
    description:
      'The platform operator installs the key that signs a tenant\'s live funding, server-side (DECISIONS.md "Live wallets"): 400 unless the key derives `address` on `chain`; the key is sealed with AES-256-GCM under `SECRETS_KEY` and never returned, logged or put in an error. Installing again for the same address replaces the sealed key. Written with its audit entry (`SIGNER_INSTALLED`), which the tenant sees in GET /v1/go-live. 404 for an unknown tenant.',
    request: {
      params: IdParamSchema,
      body: {
        required: true,
        content: {
          "application/json": {
            schema: BodySchema,
            example: { chain: "POLYGON", address: "0x8ba1f109551bD432803012645Ac136ddd64DBA72", privateKey: "0x<64 hex digits>" },
          },
        },
      },
    },
    responses: { 201: { description: "Installed; the key is sealed and not shown", content: { "application/json": { schema: SignerSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, clock, secretsKey, log } = c.get("deps");
    const body = c.req.valid("json");
    const signer = await installSigner(
      { db, secretsKey, log },
      { tenantId: c.req.valid("param").id, chain: body.chain, address: body.address, privateKey: body.privateKey, now: clock.now(), actor: OPERATOR_ACTOR },
    );
    return c.json(signer, 201);
  });
