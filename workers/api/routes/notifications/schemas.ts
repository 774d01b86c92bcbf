import { z } from "@hono/zod-openapi";
import { EMAIL_STATUSES, EVENT_TYPES, TENANT_MODES } from "../../../../shared/domain/vocabularies.ts";
import { looksLikeEventCursor } from "../../../../shared/events/list-events.ts";
import type { Notification } from "../../../../shared/notifications/notification-verbs.ts";
import { iso, isoOrNull, ModeQuerySchema, PageQuerySchema, TimestampSchema } from "../../../../shared/schemas/common.ts";

export const NotificationSchema = z
  .object({
    id: z.uuid(),
    eventId: z.uuid().openapi({ description: "The event this notification tells of (`GET /v1/events/{id}`)." }),
    type: z.enum(EVENT_TYPES),
    mode: z.enum(TENANT_MODES).openapi({ description: 'Its event\'s mode (DECISIONS.md "Modes").' }),
    title: z.string(),
    body: z.string(),
    createdAt: TimestampSchema,
    readAt: TimestampSchema.nullable(),
    email: z
      .object({
        to: z.string().nullable().openapi({ description: "The account owner's address; null when the tenant has none." }),
        status: z.enum(EMAIL_STATUSES).openapi({
          description:
            "PENDING (to send or being retried), SENT, FAILED (retries exhausted) or SKIPPED (not sent: the owner's e-mail address is not verified yet, or there is no owner; `error` says which). Verifying the address does not send e-mails skipped before.",
        }),
        attempts: z.number().int(),
        error: z.string().nullable().openapi({ description: "The last sending error, or why the e-mail was SKIPPED (`owner e-mail not verified`)." }),
        sentAt: TimestampSchema.nullable(),
      })
      .openapi({ description: "The e-mail of this notification to the account owner." }),
  })
  .openapi("Notification");

export const notificationView = (n: Notification) => ({
  id: n.id,
  eventId: n.eventId,
  type: n.eventType,
  mode: n.mode,
  title: n.title,
  body: n.body,
  createdAt: iso(n.createdAt),
  readAt: isoOrNull(n.readAt),
  email: { to: n.emailTo, status: n.emailStatus, attempts: n.emailAttempts, error: n.emailError, sentAt: isoOrNull(n.emailSentAt) },
});

export const ListNotificationsQuerySchema = z.object({
  mode: ModeQuerySchema,
  unread: z
    .enum(["true", "false"])
    .optional()
    .openapi({ param: { name: "unread", in: "query" }, description: "`true`: only unread notifications; `false`: only read ones; omitted: all." }),
  limit: PageQuerySchema.shape.limit,
  cursor: z
    .string()
    .max(200)
    .refine(looksLikeEventCursor, "is not a cursor this service issued")
    .optional()
    .openapi({ param: { name: "cursor", in: "query" }, description: "`nextCursor` of the previous page" }),
});
