import { z } from "@hono/zod-openapi";
import { CHANNELS } from "../../../../db/schema/loan-vocabularies.ts";
import { EVENT_TYPES, TENANT_MODES } from "../../../../shared/domain/vocabularies.ts";
import { looksLikeEventCursor } from "../../../../shared/events/list-events.ts";
import { limitParam, ModeQuerySchema, TimestampSchema } from "../../../../shared/schemas/common.ts";

export const EventEnvelopeSchema = z
  .object({
    id: z.uuid().openapi({ description: "The event id, the same in every webhook delivery of this event: deduplicate on it." }),
    type: z.enum(EVENT_TYPES),
    createdAt: TimestampSchema.openapi({ description: "On the tenant's clock (the sandbox clock in sandbox)." }),
    tenantId: z.uuid(),
    mode: z
      .enum(TENANT_MODES)
      .openapi({ description: 'The mode of what caused the event: its loan\'s (DECISIONS.md "Modes"); tenant-level events take the mode of their cause.' }),
    data: z.record(z.string(), z.unknown()).openapi({
      description:
        "For loan events `data.loan` is the loan as the API showed it at the event, as `GET /v1/loans` lists it (the signed `agreement`, its message and signature, is on `GET /v1/loans/{id}` only); liquidity events carry `data.pool`.",
    }),
    program: z.string().nullable().openapi({ description: "The widget program of a widget-originated loan; null otherwise." }),
    channel: z
      .string()
      .nullable()
      .openapi({ description: `The widget channel (${CHANNELS.join(", ")}) of a widget-originated loan; null otherwise.`, example: "WEB" }),
  })
  .openapi("EventEnvelope");

export const ListEventsQuerySchema = z.object({
  mode: ModeQuerySchema,
  type: z
    .enum(EVENT_TYPES)
    .optional()
    .openapi({ param: { name: "type", in: "query" }, example: "loan.funded" }),
  loanId: z
    .uuid()
    .optional()
    .openapi({ param: { name: "loanId", in: "query" }, description: "Only this loan's events." }),
  limit: limitParam(),
  cursor: z
    .string()
    .max(200)
    .refine(looksLikeEventCursor, "is not a cursor this service issued")
    .optional()
    .openapi({ param: { name: "cursor", in: "query" }, description: "`nextCursor` of the previous page" }),
});

export const EventPageSchema = z.object({ data: z.array(EventEnvelopeSchema), nextCursor: z.string().nullable() }).openapi("EventPage");
