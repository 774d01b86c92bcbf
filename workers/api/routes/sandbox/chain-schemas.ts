import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.ts";

export const ChainAmount = z
  .string()
  .regex(/^\d+(\.\d{1,6})?$/, "must be a decimal string with at most 6 decimals")
  .openapi({ example: "150.00" });

const TxResult = z
  .object({ txHash: z.string(), status: z.enum(["success", "reverted", "failed"]), blockNumber: z.number().int() })
  .passthrough()
  .openapi("SandboxTransaction");

export const jsonBody = <T extends z.ZodTypeAny>(schema: T) => ({ body: { required: true, content: { "application/json": { schema } } } });
export const txResponses = {
  200: { description: "Included in a block and processed by the settlement listener", content: { "application/json": { schema: TxResult } } },
};
export const SANDBOX_ONLY =
  "Sandbox API keys and sandbox chains only (403 otherwise; a certified tenant keeps its sandbox through its sandbox keys). It works on the tenant's own ledger of the chain: no other tenant sees it, and it never moves another tenant's or the platform's funds.";

/** What the sandbox chain verbs need from the request's dependencies. */
export const chainDeps = (c: { get(k: "deps"): AppEnv["Variables"]["deps"] }) => {
  const d = c.get("deps");
  return { db: d.db, chain: d.chain, writer: d.writer, clock: d.clock, simChains: d.simChains };
};
