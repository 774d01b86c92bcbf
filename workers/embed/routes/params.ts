import { z } from "@hono/zod-openapi";

export const EmbedKeyParam = z
  .string()
  .min(1)
  .max(64)
  .openapi({ param: { name: "embedKey", in: "path" }, example: "ek_test_3kT9vQ2mX8pL4nR7wY1zB6cD" });
export const KeyParams = z.object({ embedKey: EmbedKeyParam });
export const KeyLoanParams = z.object({
  embedKey: EmbedKeyParam,
  loanId: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "loanId", in: "path" } }),
});
export const WalletBody = z.object({ walletAddress: z.string().trim().min(1).max(128) });
/** A required JSON body; `example` (workers/embed/routes/examples.ts) is shown on the media type. */
export const json = <T extends z.ZodTypeAny>(schema: T, example?: unknown) => ({
  body: { required: true, content: { "application/json": { schema, ...(example === undefined ? {} : { example }) } } },
});
export const EMBED_ERRORS =
  "Unknown or deleted embed key: 404. A browser Origin not among the program's allowed origins: 403 (no CORS grant). Rate limited per embed key and client IP, and per client IP once its 404s (unknown keys or loans) pass 60 a minute: 429 with Retry-After. A body over 64 KiB: 413.";
