import { z } from "@hono/zod-openapi";

const DESCRIPTION =
  "Read consistency (D1 read replication): the bookmark of the database state this answer was read at. Send it back as the `x-d1-bookmark` request header on the next poll: that read is served by the nearest replica, never older than this one. Without it, a read is served by the primary (you always read your own writes).";

/** `x-d1-bookmark` on a polling read (db/read-session.ts). */
export const BookmarkRequestHeadersSchema = z.object({
  "x-d1-bookmark": z.string().optional().openapi({
    description: "The `x-d1-bookmark` of an earlier answer: read at least as fresh as it (a malformed one is ignored: the read goes to the primary).",
  }),
});

/** The answer's `x-d1-bookmark` (absent where the database has no replication, as locally). */
export const BookmarkResponseHeadersSchema = z.object({
  "x-d1-bookmark": z.string().optional().openapi({ description: DESCRIPTION }),
});
