import { and, asc, desc, eq, gt, isNull, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { emailReleases } from "../../db/schema/email-releases.ts";
import { emailVerifications } from "../../db/schema/email-verifications.ts";
import { users } from "../../db/schema/users.ts";
import { businessRule, conflict, notFound, rateLimited } from "../domain/errors.ts";
import { newId, randomToken } from "../domain/ids.ts";
import type { Logger } from "../observability/logger.ts";
import { safeErrorFields } from "../observability/logger.ts";
import type { MailProvider } from "../notifications/mail-provider.ts";
import type { VerbDeps } from "../verbs.ts";
import { insertIf } from "../../db/guarded-writes.ts";

/** A link is valid this long after it is sent. */
export const VERIFICATION_TTL_MS = 24 * 60 * 60_000;
/** Resends: at most one a minute, and at most this many links per user in 24 hours (signup's included). */
export const RESEND_INTERVAL_MS = 60_000;
export const MAX_LINKS_PER_DAY = 5;

/** The path of the link; `GET` shows a confirmation page, `POST { token }` verifies. */
export const VERIFY_EMAIL_PATH = "/v1/auth/verify-email";

export const sha256Hex = async (text: string) =>
  [...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)))].map((b) => b.toString(16).padStart(2, "0")).join("");

/**
 * The verification e-mail. Fixed text only: nothing a merchant typed (no
 * company name), because the address is not yet proven to be theirs and the
 * mail goes out from our domain.
 */
export function verificationEmail(link: string): { subject: string; text: string } {
  return {
    subject: "[svc credit] Verify your e-mail address",
    text: [
      "This address was used to create an svc credit account.",
      "",
      "To confirm it is yours and receive account notifications by e-mail, open this link within 24 hours:",
      link,
      "",
      "If this was not you, ignore this message: no further e-mail goes to this address unless it is verified.",
    ].join("\n"),
  };
}

export type VerificationDeps = { db: Db; mail: MailProvider; log: Logger };

/**
 * Records a new single-use link for the user's current address and e-mails
 * it. Only the token's hash is stored. `throttled`: only if `mayResendTo`
 * holds as the row is written (null otherwise, nothing sent). A send failure is logged, not thrown:
 * the account works without a verified address, and the user can ask again.
 */
export async function sendVerificationLink(
  deps: VerificationDeps,
  input: { userId: string; email: string; baseUrl: string; now: Date; throttled?: boolean },
): Promise<{ verificationId: string; expiresAt: Date } | null> {
  const token = randomToken(43); // ~256 bits
  const id = newId();
  const row = {
    id,
    userId: input.userId,
    email: input.email,
    tokenHash: await sha256Hex(token),
    expiresAt: new Date(input.now.getTime() + VERIFICATION_TTL_MS),
    usedAt: null,
    createdAt: input.now,
  };
  if (input.throttled) {
    const inserted = await insertIf(deps.db, emailVerifications, row, mayResendTo(input.email, input.now)).returning({ id: emailVerifications.id });
    if (inserted.length === 0) return null;
  } else {
    await deps.db.insert(emailVerifications).values(row);
  }
  const link = `${input.baseUrl}${VERIFY_EMAIL_PATH}?token=${token}`;
  const mail = verificationEmail(link);
  try {
    const sent = await deps.mail.send({ to: input.email, ...mail, notificationId: null, idempotencyKey: `email-verification-${id}` }, input.now);
    if (!sent.ok) deps.log.error("verification e-mail not sent", { userId: input.userId, verificationId: id, error: sent.error });
  } catch (err) {
    deps.log.error("verification e-mail not sent", { userId: input.userId, verificationId: id, ...safeErrorFields(err) });
  }
  return { verificationId: id, expiresAt: new Date(input.now.getTime() + VERIFICATION_TTL_MS) };
}

/**
 * A new link for a signed-in user whose address is not verified yet (409 when
 * it is). Throttled in the database per address, not per user, and not only
 * by the request limiter: an address typed by someone else gets at most a
 * few links a day, one a minute and `MAX_LINKS_PER_DAY` per 24 hours,
 * counting the links sent to it for any user (removing a user and adding the
 * address again does not start a new budget). The row is written under the
 * same condition, so concurrent resends cannot pass it together.
 */
export async function resendVerificationLink(deps: VerificationDeps, input: { userId: string; baseUrl: string; now: Date }) {
  const [user] = await deps.db.select({ email: users.email, verifiedAt: users.emailVerifiedAt }).from(users).where(eq(users.id, input.userId)).limit(1);
  if (!user) throw notFound("User");
  if (user.verifiedAt) throw conflict("This e-mail address is already verified");
  const sent = await sendVerificationLink(deps, { userId: input.userId, email: user.email, baseUrl: input.baseUrl, now: input.now, throttled: true });
  if (sent) return sent;
  const dayAgo = new Date(input.now.getTime() - 24 * 60 * 60_000);
  const sentTo = (since: Date) => and(countedLinks(user.email), gt(emailVerifications.createdAt, since));
  const [[last], [oldest]] = await deps.db.batch([
    deps.db
      .select({ createdAt: emailVerifications.createdAt })
      .from(emailVerifications)
      .where(sentTo(dayAgo))
      .orderBy(desc(emailVerifications.createdAt))
      .limit(1),
    deps.db
      .select({ createdAt: emailVerifications.createdAt })
      .from(emailVerifications)
      .where(sentTo(dayAgo))
      .orderBy(asc(emailVerifications.createdAt))
      .limit(1),
  ]);
  if (last && input.now.getTime() - last.createdAt.getTime() < RESEND_INTERVAL_MS) {
    throw rateLimited((RESEND_INTERVAL_MS - (input.now.getTime() - last.createdAt.getTime())) / 1000);
  }
  throw rateLimited(oldest ? (oldest.createdAt.getTime() - dayAgo.getTime()) / 1000 : 3600);
}

/**
 * SQL: the links counted against `email`'s budget: those since the address
 * was last freed (POST /v1/auth/release-email/confirm), if it was. The links
 * an account that squatted the address had sent to it do not count against
 * its owner (a review had the owner, signing up with the address just freed,
 * get no link and 429 on resend for a day).
 */
const countedLinks = (email: string) =>
  sql`${emailVerifications.email} = ${email} AND ${emailVerifications.createdAt} >= COALESCE((SELECT max(${emailReleases.freedAt}) FROM ${emailReleases} WHERE ${emailReleases.email} = ${email.trim().toLowerCase()}), 0)`;

/**
 * SQL: a link may go to `email` now: none in the last `RESEND_INTERVAL_MS`,
 * fewer than `MAX_LINKS_PER_DAY` in 24 hours (whatever user they were for),
 * counting from the address's last release.
 */
function mayResendTo(email: string, now: Date) {
  const sentSince = (ms: number) =>
    sql`(SELECT count(*) FROM ${emailVerifications} WHERE ${countedLinks(email)} AND ${emailVerifications.createdAt} > ${now.getTime() - ms})`;
  return sql`${sentSince(RESEND_INTERVAL_MS)} = 0 AND ${sentSince(24 * 60 * 60_000)} < ${MAX_LINKS_PER_DAY}`;
}

/**
 * Marks verified the user whose token this batch claimed (used at `now`),
 * while their address is still the one the link went to. The user is found
 * by the claimed token's `user_id` (a primary-key lookup), not by testing
 * every user against the token.
 */
export function verifiedUserUpdate(db: Db, tokenHash: string, now: Date) {
  const claimedBy = (column: typeof emailVerifications.userId | typeof emailVerifications.email) =>
    sql`(SELECT ${column} FROM ${emailVerifications} WHERE ${emailVerifications.tokenHash} = ${tokenHash} AND ${emailVerifications.usedAt} = ${now.getTime()})`;
  return db
    .update(users)
    .set({ emailVerifiedAt: now })
    .where(and(eq(users.id, claimedBy(emailVerifications.userId)), isNull(users.emailVerifiedAt), eq(users.email, claimedBy(emailVerifications.email))));
}

/**
 * Follows a link: the token must be known, unused and unexpired (400
 * otherwise, saying which). Claiming the token and marking the user verified
 * are one batch, and the claim is conditional on `used_at IS NULL`, so of
 * two concurrent uses exactly one succeeds. The user is verified only while
 * their address is still the one the link went to.
 */
export async function verifyEmailToken({ db }: Pick<VerbDeps, "db">, input: { token: string; now: Date }) {
  if (!/^[0-9A-Za-z]{20,100}$/.test(input.token)) throw businessRule("token is not a valid verification token");
  const tokenHash = await sha256Hex(input.token);
  const [claimed] = await db.batch([
    db
      .update(emailVerifications)
      .set({ usedAt: input.now })
      .where(and(eq(emailVerifications.tokenHash, tokenHash), isNull(emailVerifications.usedAt), gt(emailVerifications.expiresAt, input.now)))
      .returning({ userId: emailVerifications.userId, email: emailVerifications.email }),
    verifiedUserUpdate(db, tokenHash, input.now),
  ]);
  const row = claimed[0];
  if (!row) {
    const [known] = await db.select({ usedAt: emailVerifications.usedAt }).from(emailVerifications).where(eq(emailVerifications.tokenHash, tokenHash)).limit(1);
    if (!known) throw businessRule("token is not a valid verification token");
    if (known.usedAt) throw businessRule("token has already been used; sign in and request a new link if your address is not verified");
    throw businessRule("token has expired; sign in and request a new link");
  }
  const [user] = await db.select({ id: users.id, email: users.email, verifiedAt: users.emailVerifiedAt }).from(users).where(eq(users.id, row.userId)).limit(1);
  if (!user || user.email !== row.email || !user.verifiedAt) throw businessRule("token was sent to an address this account no longer uses");
  return { userId: user.id, email: user.email, emailVerifiedAt: user.verifiedAt };
}
