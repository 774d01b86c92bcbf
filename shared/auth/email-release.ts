import { and, count, desc, eq, gt, isNull, sql } from "drizzle-orm";
import { apiKeys } from "../../db/schema/api-keys.ts";
import { emailReleases } from "../../db/schema/email-releases.ts";
import { emailVerifications } from "../../db/schema/email-verifications.ts";
import { users } from "../../db/schema/users.ts";
import { businessRule, conflict } from "../domain/errors.ts";
import { newId, randomToken } from "../domain/ids.ts";
import { safeErrorFields } from "../observability/logger.ts";
import { sha256Hex, type VerificationDeps } from "./email-verification.ts";

/**
 * Freeing an e-mail address (README "Freeing an e-mail address"). Addresses
 * are unique across tenants (login is by e-mail alone) and are not proven
 * when they are used, so anyone could sign up, or add a user, with someone
 * else's address and stop its owner signing up. The owner of the address
 * asks for a link; following it removes the account that holds the address,
 * as long as that account never proved the address (a verified address was
 * proven by its owner, so it is never freed this way).
 */

const normalized = (email: string) => email.trim().toLowerCase();

/** A link is valid this long after it is sent. */
export const RELEASE_TTL_MS = 24 * 60 * 60_000;
/** Per address: at most one link a minute, and this many in 24 hours. */
export const RELEASE_INTERVAL_MS = 60_000;
export const MAX_RELEASE_LINKS_PER_DAY = 3;

/** After a release, the address is held this long for whoever followed the link (`heldAddress`). */
export const RELEASE_HOLD_MS = 24 * 60 * 60_000;

/** Signup's and an added user's 409 while an address is held after a release. */
export const ADDRESS_HELD_MESSAGE =
  "This e-mail address was freed by its owner within the last 24 hours: until then only they can sign up with it, with the token of their release link (releaseToken)";

/**
 * SQL: true while `email` is held after a release, for anyone but the holder
 * of `releaseToken` (its SHA-256): a link followed and freed within
 * `RELEASE_HOLD_MS`. Written into the guarded insert of signup and of an
 * added user, so the account that was removed cannot take the address back
 * before its owner signs up.
 */
export async function heldAddress(email: string, now: Date, releaseToken?: string) {
  const presented = releaseToken ? await sha256Hex(releaseToken) : null;
  return sql`EXISTS (SELECT 1 FROM ${emailReleases} WHERE ${emailReleases.email} = ${normalized(email)} AND ${emailReleases.freedAt} > ${now.getTime() - RELEASE_HOLD_MS} AND ${emailReleases.tokenHash} IS NOT ${presented})`;
}

/** The path of the link; `GET` shows a confirmation page, `POST …/confirm { token }` frees the address. */
export const RELEASE_EMAIL_PATH = "/v1/auth/release-email";

/** What `POST /v1/auth/release-email` answers, whatever the address: it does not tell whether a link went out. */
export const RELEASE_REQUESTED_MESSAGE =
  "If this address is held by an svc credit account that never verified it, a link to free it has been e-mailed to the address. The link is valid 24 hours.";

/** The release e-mail: fixed text only, nothing a merchant typed (the account that holds the address may be anyone's). */
export function releaseEmail(link: string): { subject: string; text: string } {
  return {
    subject: "[svc credit] Free this e-mail address",
    text: [
      "Someone asked to free this e-mail address from the svc credit account that holds it. That account has never verified the address.",
      "",
      "If that account is not yours, open this link within 24 hours and confirm. The account loses this address and its sign-ins end; you can then sign up with the address:",
      link,
      "",
      "If the account is yours, ignore this message and verify your address from the dashboard: a verified address cannot be freed.",
    ].join("\n"),
  };
}

/**
 * Sends a release link to `email` if an account holds it unverified, at most
 * one a minute and `MAX_RELEASE_LINKS_PER_DAY` a day per address; otherwise
 * does nothing. The caller answers the same either way. A send failure is
 * logged, not thrown (the person can ask again).
 */
export async function requestEmailRelease(deps: VerificationDeps, input: { email: string; baseUrl: string; now: Date }): Promise<{ sent: boolean }> {
  const email = normalized(input.email);
  const dayAgo = new Date(input.now.getTime() - 24 * 60 * 60_000);
  const [[holder], [recent], [last]] = await deps.db.batch([
    deps.db.select({ id: users.id, verifiedAt: users.emailVerifiedAt }).from(users).where(eq(users.email, email)).limit(1),
    deps.db
      .select({ n: count() })
      .from(emailReleases)
      .where(and(eq(emailReleases.email, email), gt(emailReleases.createdAt, dayAgo))),
    deps.db
      .select({ createdAt: emailReleases.createdAt })
      .from(emailReleases)
      .where(eq(emailReleases.email, email))
      .orderBy(desc(emailReleases.createdAt))
      .limit(1),
  ]);
  if (!holder || holder.verifiedAt) return { sent: false };
  if (last && input.now.getTime() - last.createdAt.getTime() < RELEASE_INTERVAL_MS) return { sent: false };
  if ((recent?.n ?? 0) >= MAX_RELEASE_LINKS_PER_DAY) return { sent: false };
  const token = randomToken(43); // ~256 bits
  const id = newId();
  await deps.db.insert(emailReleases).values({
    id,
    email,
    userId: holder.id,
    tokenHash: await sha256Hex(token),
    expiresAt: new Date(input.now.getTime() + RELEASE_TTL_MS),
    usedAt: null,
    createdAt: input.now,
  });
  const mail = releaseEmail(`${input.baseUrl}${RELEASE_EMAIL_PATH}?token=${token}`);
  try {
    const sent = await deps.mail.send({ to: email, ...mail, notificationId: null, idempotencyKey: `email-release-${id}` }, input.now);
    if (!sent.ok) deps.log.error("release e-mail not sent", { releaseId: id, error: sent.error });
  } catch (err) {
    deps.log.error("release e-mail not sent", { releaseId: id, ...safeErrorFields(err) });
  }
  return { sent: true };
}

/**
 * Follows a release link: the token must be known, unused and unexpired (400
 * otherwise, saying which). Claiming the token and removing the account are
 * one batch; the account goes only if it is the one the link was sent for,
 * still at that address and still unverified (409 otherwise: the token is
 * then used up, and the account stays). Of two concurrent uses, one claims.
 * The account's row goes as `DELETE /v1/users/:id` removes it: its sessions
 * end on their next request, its verification links go, and the API keys it
 * created stay with its tenant, no longer naming it. The address is then
 * held for `RELEASE_HOLD_MS` for the token's holder (`heldAddress`).
 */
export async function confirmEmailRelease(
  { db }: Pick<VerificationDeps, "db">,
  input: { token: string; now: Date },
): Promise<{ email: string; heldUntil: Date }> {
  if (!/^[0-9A-Za-z]{20,100}$/.test(input.token)) throw businessRule("token is not a valid release token");
  const tokenHash = await sha256Hex(input.token);
  const claimed = (column: typeof emailReleases.userId | typeof emailReleases.email) =>
    sql`(SELECT ${column} FROM ${emailReleases} WHERE ${emailReleases.tokenHash} = ${tokenHash} AND ${emailReleases.usedAt} = ${input.now.getTime()})`;
  const holder = and(eq(users.id, claimed(emailReleases.userId)), eq(users.email, claimed(emailReleases.email)), isNull(users.emailVerifiedAt));
  const holderExists = sql`EXISTS (SELECT 1 FROM ${users} WHERE ${holder})`;
  const [claims, , , , removed] = await db.batch([
    db
      .update(emailReleases)
      .set({ usedAt: input.now })
      .where(and(eq(emailReleases.tokenHash, tokenHash), isNull(emailReleases.usedAt), gt(emailReleases.expiresAt, input.now)))
      .returning({ email: emailReleases.email }),
    // Under the same condition as the removal, before it: the address is held for this link's holder.
    db
      .update(emailReleases)
      .set({ freedAt: input.now })
      .where(and(eq(emailReleases.tokenHash, tokenHash), eq(emailReleases.usedAt, input.now), holderExists)),
    db
      .update(apiKeys)
      .set({ createdByUserId: null })
      .where(and(eq(apiKeys.createdByUserId, claimed(emailReleases.userId)), holderExists)),
    db.delete(emailVerifications).where(and(eq(emailVerifications.userId, claimed(emailReleases.userId)), holderExists)),
    db.delete(users).where(holder).returning({ id: users.id }),
  ]);
  const claim = claims[0];
  if (!claim) {
    const [known] = await db.select({ usedAt: emailReleases.usedAt }).from(emailReleases).where(eq(emailReleases.tokenHash, tokenHash)).limit(1);
    if (!known) throw businessRule("token is not a valid release token");
    if (known.usedAt) throw businessRule("token has already been used");
    throw businessRule("token has expired; ask for a new link");
  }
  if (removed.length === 0) throw conflict("This link changed nothing: since it was sent, the account verified the address or no longer holds it");
  return { email: claim.email, heldUntil: new Date(input.now.getTime() + RELEASE_HOLD_MS) };
}
