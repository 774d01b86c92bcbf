import { z } from "@hono/zod-openapi";
import { PLAIN_TEXT_PATTERN, PLAIN_TEXT_RULE } from "../domain/plain-text.ts";

/** A name or reference people read (shared/domain/plain-text.ts): trimmed, 1 to `max` characters, plain. */
export const plainText = (max: number) => z.string().trim().min(1).max(max).regex(PLAIN_TEXT_PATTERN, PLAIN_TEXT_RULE);
