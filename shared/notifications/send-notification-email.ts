import { and, eq, isNotNull } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { users } from "../../db/schema/users.ts";
import { notifications } from "../../db/schema/webhooks.ts";
import type { Clock } from "../domain/clock.ts";
import type { MailProvider } from "./mail-provider.ts";

export const MAX_EMAIL_ATTEMPTS = 3;
/** The reason shown on a notification whose e-mail was not sent because the address is unproven. */
export const OWNER_EMAIL_NOT_VERIFIED = "owner e-mail not verified";
/** Delays before e-mail retries 2 and 3. */
export const EMAIL_RETRY_SECONDS = [30, 300];

/**
 * Sends a notification's owner e-mail (from its own Queue message, so it
 * never holds up a webhook). The attempt is counted with a conditional update
 * before sending, so duplicate messages never send twice in parallel; a
 * failure is recorded on the notification and retried up to 3 times in all.
 * Nothing goes to an address that no user of the tenant has verified: such
 * an e-mail is marked SKIPPED (the notification itself stays).
 */
export async function sendNotificationEmail(
  deps: { db: Db; mail: MailProvider; clock: Clock; retrySeconds?: number[] },
  notificationId: string,
): Promise<{ ack: true } | { ack: false; retryInSeconds: number }> {
  const { db } = deps;
  const [n] = await db.select().from(notifications).where(eq(notifications.id, notificationId)).limit(1);
  if (!n || n.emailStatus !== "PENDING" || !n.emailTo) return { ack: true };
  const [verified] = await db
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.tenantId, n.tenantId), eq(users.email, n.emailTo.toLowerCase()), isNotNull(users.emailVerifiedAt)))
    .limit(1);
  if (!verified) {
    await db
      .update(notifications)
      .set({ emailStatus: "SKIPPED", emailError: OWNER_EMAIL_NOT_VERIFIED })
      .where(and(eq(notifications.id, n.id), eq(notifications.emailStatus, "PENDING")));
    return { ack: true };
  }
  const attempt = n.emailAttempts + 1;
  const claimed = await db
    .update(notifications)
    .set({ emailAttempts: attempt })
    .where(and(eq(notifications.id, n.id), eq(notifications.emailAttempts, n.emailAttempts), eq(notifications.emailStatus, "PENDING")))
    .returning({ id: notifications.id });
  if (claimed.length === 0) return { ack: true };
  const now = deps.clock.now();
  const result = await deps.mail.send({ to: n.emailTo, subject: `[svc credit] ${n.title}`, text: n.body, notificationId: n.id }, now);
  if (result.ok) {
    await db.update(notifications).set({ emailStatus: "SENT", emailSentAt: now, emailError: null }).where(eq(notifications.id, n.id));
    return { ack: true };
  }
  const final = attempt >= MAX_EMAIL_ATTEMPTS;
  await db
    .update(notifications)
    .set({ emailError: result.error, ...(final ? { emailStatus: "FAILED" as const } : {}) })
    .where(eq(notifications.id, n.id));
  const delays = deps.retrySeconds ?? EMAIL_RETRY_SECONDS;
  return final ? { ack: true } : { ack: false, retryInSeconds: delays[attempt - 1] ?? delays.at(-1) ?? 30 };
}
