import { and, asc, eq, isNotNull } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { users } from "../../db/schema/users.ts";
import { notifications } from "../../db/schema/webhooks.ts";
import type { Clock } from "../domain/clock.ts";
import { isTransientError, persistently, recordPersistently } from "../http/transient-errors.ts";
import type { MailProvider } from "./mail-provider.ts";
import { sha256Hex } from "../auth/email-verification.ts";

export const MAX_EMAIL_ATTEMPTS = 3;
/** The reason shown on a notification whose e-mail was not sent because the address is unproven. */
export const OWNER_EMAIL_NOT_VERIFIED = "owner e-mail not verified";
/** The reason shown when the owner it was addressed to is no longer an OWNER of the tenant when it is sent. */
export const RECIPIENT_NOT_OWNER = "recipient is no longer an owner";
/** Delays before e-mail retries 2 and 3. */
export const EMAIL_RETRY_SECONDS = [30, 300];
/**
 * An attempt holds the e-mail for this long (the mail API's 10 s timeout plus
 * a margin): a duplicate message meanwhile waits, and an attempt whose worker
 * died counts as made once it has passed, so none is sent twice at once.
 */
export const EMAIL_LEASE_MS = 15_000;

/**
 * Sends a notification's owner e-mail (from its own Queue message, so it
 * never holds up a webhook). The attempt is counted with a conditional update
 * before sending, which also takes the e-mail's lease (`emailNextAttemptAt`),
 * so duplicate messages never send twice in parallel, and one that comes
 * before the e-mail is due waits; a failure is recorded on the notification
 * and retried up to 3 times in all. D1's transient errors during this
 * bookkeeping spend no attempt and send nothing twice (`claimAttempt`,
 * `recordPersistently`).
 * Nothing goes to an address that no user of the tenant has verified, nor to
 * one whose user is no longer an OWNER (an owner demoted, by another owner
 * locking a departing one out, while its e-mails waited: an audit had them
 * still sent to it). Such an e-mail goes to the tenant's oldest verified
 * OWNER instead (its `emailTo` moved, conditionally, before the attempt), or,
 * when there is none, is marked SKIPPED with the reason (the notification
 * itself stays).
 */
export async function sendNotificationEmail(
  deps: { db: Db; mail: MailProvider; clock: Clock; retrySeconds?: number[] },
  notificationId: string,
): Promise<{ ack: true } | { ack: false; retryInSeconds: number }> {
  const { db } = deps;
  const [n] = await db.select().from(notifications).where(eq(notifications.id, notificationId)).limit(1);
  if (!n || n.emailStatus !== "PENDING" || !n.emailTo) return { ack: true };
  const [recipient] = await db
    .select({ role: users.role })
    .from(users)
    .where(and(eq(users.tenantId, n.tenantId), eq(users.email, n.emailTo.toLowerCase()), isNotNull(users.emailVerifiedAt)))
    .limit(1);
  // The recipient: the addressed owner while still one; else the tenant's oldest verified OWNER, written with the
  // attempt that sends to it (claimAttempt), so the row names whom the e-mail went to.
  let to = n.emailTo;
  if (!recipient || recipient.role !== "OWNER") {
    const [owner] = await db
      .select({ email: users.email })
      .from(users)
      .where(and(eq(users.tenantId, n.tenantId), eq(users.role, "OWNER"), isNotNull(users.emailVerifiedAt)))
      .orderBy(asc(users.createdAt))
      .limit(1);
    if (!owner) {
      await db
        .update(notifications)
        .set({ emailStatus: "SKIPPED", emailError: recipient ? RECIPIENT_NOT_OWNER : OWNER_EMAIL_NOT_VERIFIED })
        .where(and(eq(notifications.id, n.id), eq(notifications.emailStatus, "PENDING")));
      return { ack: true };
    }
    to = owner.email;
  }
  const now = deps.clock.now();
  const dueInMs = (n.emailNextAttemptAt?.getTime() ?? 0) - now.getTime();
  // An attempt is out (or a retry not yet due): this message comes back when it is.
  if (dueInMs > 0) return { ack: false, retryInSeconds: Math.max(1, Math.ceil(dueInMs / 1000)) };
  if (n.emailAttempts >= MAX_EMAIL_ATTEMPTS) {
    // The last attempt's worker died before recording its outcome.
    await db
      .update(notifications)
      .set({ emailStatus: "FAILED", emailError: n.emailError ?? "interrupted before its outcome was recorded", emailNextAttemptAt: null })
      .where(and(eq(notifications.id, n.id), eq(notifications.emailAttempts, n.emailAttempts), eq(notifications.emailStatus, "PENDING")));
    return { ack: true };
  }
  const attempt = n.emailAttempts + 1;
  if (!(await claimAttempt(db, n, attempt, new Date(now.getTime() + EMAIL_LEASE_MS), to))) return { ack: true };
  // Keyed per recipient too: a retry re-addressed to another owner is another e-mail, which the provider must not
  // answer with the first one's result (a review had it never sent, yet SENT).
  const idempotencyKey = to === n.emailTo ? undefined : `notification-${n.id}-${(await sha256Hex(to.toLowerCase())).slice(0, 16)}`;
  const result = await deps.mail.send({ to, subject: `[svc credit] ${n.title}`, text: n.body, notificationId: n.id, idempotencyKey }, now);
  if (result.ok) {
    await recordPersistently(() =>
      db.update(notifications).set({ emailStatus: "SENT", emailSentAt: now, emailError: null, emailNextAttemptAt: null }).where(eq(notifications.id, n.id)),
    );
    return { ack: true };
  }
  const final = attempt >= MAX_EMAIL_ATTEMPTS;
  const delays = deps.retrySeconds ?? EMAIL_RETRY_SECONDS;
  const retryInSeconds = delays[attempt - 1] ?? delays.at(-1) ?? 30;
  await recordPersistently(() =>
    db
      .update(notifications)
      .set({
        emailError: result.error,
        emailNextAttemptAt: final ? null : new Date(deps.clock.now().getTime() + retryInSeconds * 1000),
        ...(final ? { emailStatus: "FAILED" as const } : {}),
      })
      .where(eq(notifications.id, n.id)),
  );
  return final ? { ack: true } : { ack: false, retryInSeconds };
}

/**
 * Takes attempt `attempt` of the e-mail with its lease, conditional on no
 * other attempt having been taken since `n` was read: true when this call
 * holds it. If D1 fails transiently, the update may have committed with its
 * answer lost: the row is read back, and an attempt that carries exactly
 * this call's lease instant is this call's (it goes on and sends). A claim
 * that did not run throws, so the Queue retries the message with nothing
 * spent; one another message took answers false. The claim writes the
 * recipient `to` (the addressed owner, or the owner it moves to) under the
 * same condition, also on the address it was read with: only the attempt
 * that sends decides whom the row names.
 */
async function claimAttempt(
  db: Db,
  n: { id: string; emailAttempts: number; emailTo: string | null },
  attempt: number,
  leaseUntil: Date,
  to: string,
): Promise<boolean> {
  try {
    const claimed = await db
      .update(notifications)
      .set({ emailAttempts: attempt, emailNextAttemptAt: leaseUntil, emailTo: to })
      .where(
        and(
          eq(notifications.id, n.id),
          eq(notifications.emailAttempts, n.emailAttempts),
          eq(notifications.emailStatus, "PENDING"),
          n.emailTo === null ? undefined : eq(notifications.emailTo, n.emailTo),
        ),
      )
      .returning({ id: notifications.id });
    return claimed.length > 0;
  } catch (err) {
    if (!isTransientError(err)) throw err;
    const [now] = await persistently(() =>
      db
        .select({ attempts: notifications.emailAttempts, next: notifications.emailNextAttemptAt, status: notifications.emailStatus })
        .from(notifications)
        .where(eq(notifications.id, n.id))
        .limit(1),
    );
    if (now?.status === "PENDING" && now.attempts === attempt && now.next?.getTime() === leaseUntil.getTime()) return true;
    if (!now || now.attempts === n.emailAttempts) throw err;
    return false;
  }
}
