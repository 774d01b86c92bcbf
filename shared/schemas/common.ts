import { z } from "@hono/zod-openapi";
import { decodeCursor } from "../../db/pagination.ts";

/** SPEC.md "Errors": the body of every error response. */
export const ErrorBodySchema = z
  .object({
    statusCode: z.number().int().openapi({ example: 400 }),
    message: z
      .union([z.string(), z.array(z.string())])
      .openapi({ description: "A sentence, or one string per bad field for validation failures (each names its field)." }),
    error: z.string().openapi({ example: "Bad Request" }),
  })
  .openapi("Error");

export const IdParamSchema = z.object({
  id: z
    .string()
    .min(1)
    .max(255)
    .openapi({ param: { name: "id", in: "path" }, example: "5b0e1c0a-6f7d-4c1e-9a3b-2f1d0c9e8a7b" }),
});

export const TimestampSchema = z.string().openapi({ example: "2026-11-21T10:00:00.000Z", format: "date-time" });
export const iso = (d: Date): string => d.toISOString();
export const isoOrNull = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

/**
 * DECISIONS.md "Lists": `limit`, an integer 1..100 (default 20), written in
 * plain digits: `0x10`, `1e1`, `+5`, `10.0` or ` 5` are 400s, not numbers a
 * looser parse would read.
 */
const LIMIT_RULE = "must be a whole number from 1 to 100, in digits";
export const limitParam = () =>
  z
    .preprocess(
      (v) => (typeof v === "string" && /^[0-9]{1,4}$/.test(v) ? Number(v) : v),
      z.number({ error: LIMIT_RULE }).int({ error: LIMIT_RULE }).min(1, { error: LIMIT_RULE }).max(100, { error: LIMIT_RULE }).default(20),
    )
    .openapi({ param: { name: "limit", in: "query" }, type: "integer", minimum: 1, maximum: 100, default: 20, example: 20 });

/** DECISIONS.md "Lists": `limit` 1..100 (default 20), opaque `cursor`. */
export const PageQuerySchema = z.object({
  limit: limitParam(),
  cursor: z
    .string()
    .max(200)
    .refine((s) => decodeCursor(s) !== null, "is not a cursor this service issued")
    .optional()
    .openapi({ param: { name: "cursor", in: "query" }, description: "`nextCursor` of the previous page" }),
});

export const pageOf = <T extends z.ZodTypeAny>(item: T) => z.object({ data: z.array(item), nextCursor: z.string().nullable() });

/**
 * The `mode` filter of the lists (DECISIONS.md "Modes"): an API key sees only
 * its own mode (the other one: 403); a dashboard session sees both unless it
 * names one.
 */
export const ModeQuerySchema = z
  .enum(["sandbox", "live"])
  .optional()
  .openapi({
    param: { name: "mode", in: "query" },
    description: "sandbox or live. An API key sees only its own mode (asking for the other: 403); a dashboard session sees both unless it names one.",
  });
