import { and, asc, eq, gt, isNull, ne, notExists, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { insertIf } from "../../db/guarded-writes.ts";
import { emailReleases } from "../../db/schema/email-releases.ts";
import { users } from "../../db/schema/users.ts";
import { businessRule, conflict } from "../domain/errors.ts";
import { newId, randomToken } from "../domain/ids.ts";
import { safeErrorFields } from "../observability/logger.ts";
import { sha256Hex, type VerificationDeps } from "./email-verification.ts";
import { userRemoval } from "../users/manage-users.ts";

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
  const freedWithin = and(eq(emailReleases.email, normalized(email)), gt(emailReleases.freedAt, new Date(now.getTime() - RELEASE_HOLD_MS)));
  // Any link that freed the address within the hold admits its holder (an address freed twice holds for either).
  return sql`(EXISTS (SELECT 1 FROM ${emailReleases} WHERE ${freedWithin}) AND NOT EXISTS (SELECT 1 FROM ${emailReleases} WHERE ${freedWithin} AND ${emailReleases.tokenHash} = ${presented}))`;
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

/** SQL: the unverified account holding `email` (its id), or NULL. */
const unverifiedHolderOf = (email: string) => sql`(SELECT ${users.id} FROM ${users} WHERE ${users.email} = ${email} AND ${users.emailVerifiedAt} IS NULL)`;

/**
 * SQL: a release link may go to `email` now: an unverified account holds it,
 * and none went to it in the last `RELEASE_INTERVAL_MS`, fewer than
 * `MAX_RELEASE_LINKS_PER_DAY` in 24 hours.
 */
function mayReleaseTo(email: string, now: Date) {
  const sentSince = (ms: number) =>
    sql`(SELECT count(*) FROM ${emailReleases} WHERE ${emailReleases.email} = ${email} AND ${emailReleases.createdAt} > ${now.getTime() - ms})`;
  return sql`${unverifiedHolderOf(email)} IS NOT NULL AND ${sentSince(RELEASE_INTERVAL_MS)} = 0 AND ${sentSince(24 * 60 * 60_000)} < ${MAX_RELEASE_LINKS_PER_DAY}`;
}

/**
 * Sends a release link to `email` if an account holds it unverified, at most
 * one a minute and `MAX_RELEASE_LINKS_PER_DAY` a day per address; otherwise
 * does nothing. The link's row is written under that condition (one
 * statement), so concurrent requests cannot pass it together. The route runs
 * this after its answer, which is the same either way, so neither body nor
 * timing tells what happened. A send failure is logged, not thrown (the
 * person can ask again).
 */
export async function requestEmailRelease(deps: VerificationDeps, input: { email: string; baseUrl: string; now: Date }): Promise<{ sent: boolean }> {
  const email = normalized(input.email);
  const token = randomToken(43); // ~256 bits
  const id = newId();
  const row = {
    id,
    email,
    userId: unverifiedHolderOf(email),
    tokenHash: await sha256Hex(token),
    expiresAt: new Date(input.now.getTime() + RELEASE_TTL_MS),
    usedAt: null,
    createdAt: input.now,
  };
  const inserted = await insertIf(deps.db, emailReleases, row, mayReleaseTo(email, input.now)).returning({ id: emailReleases.id });
  if (inserted.length === 0) return { sent: false };
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
 * one batch. The account removed is whichever holds the link's address,
 * unverified, when the link is followed: the link was sent to the address,
 * so it speaks for the address, not for one account (a holder that removes
 * itself and adds the address again is freed all the same). An address
 * verified since, or no longer held: 409, the token used up, nothing else
 * changes. Of two concurrent uses, one claims.
 *
 * The account goes as `DELETE /v1/users/:id` removes it: its sessions end on
 * their next request, and the API keys it created stay with its tenant, no
 * longer naming it. If it was its tenant's only OWNER, its tenant's
 * longest-standing ADMIN (else MEMBER) becomes OWNER in the same batch, so
 * the tenant is never left without one while it has users. The address is
 * then held for `RELEASE_HOLD_MS` for the token's holder (`heldAddress`).
 */
export async function confirmEmailRelease(
  { db }: Pick<VerificationDeps, "db">,
  input: { token: string; now: Date },
): Promise<{ email: string; heldUntil: Date }> {
  if (!/^[0-9A-Za-z]{20,100}$/.test(input.token)) throw businessRule("token is not a valid release token");
  const tokenHash = await sha256Hex(input.token);
  const claimedEmail = sql`(SELECT ${emailReleases.email} FROM ${emailReleases} WHERE ${emailReleases.tokenHash} = ${tokenHash} AND ${emailReleases.usedAt} = ${input.now.getTime()})`;
  const holder = and(eq(users.email, claimedEmail), isNull(users.emailVerifiedAt))!;
  const holderColumn = (column: typeof users.id | typeof users.tenantId) => sql`(SELECT ${column} FROM ${users} WHERE ${holder})`;
  const other = alias(users, "other");
  const successor = db
    .select({ id: other.id })
    .from(other)
    .where(and(eq(other.tenantId, holderColumn(users.tenantId)), ne(other.id, holderColumn(users.id))))
    .orderBy(sql`CASE ${other.role} WHEN 'ADMIN' THEN 0 ELSE 1 END`, asc(other.createdAt), asc(other.id))
    .limit(1);
  const otherOwner = db
    .select({ id: other.id })
    .from(other)
    .where(and(eq(other.tenantId, holderColumn(users.tenantId)), eq(other.role, "OWNER"), ne(other.id, holderColumn(users.id))));
  const holderIsOnlyOwner = and(sql`EXISTS (SELECT 1 FROM ${users} WHERE ${holder} AND ${users.role} = 'OWNER')`, notExists(otherOwner));
  const removal = userRemoval(db, { id: holderColumn(users.id), where: holder });
  const holderExists = removal.removable;
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
    // The successor is promoted before the removal, while the holder is still there to be judged the only OWNER.
    db
      .update(users)
      .set({ role: "OWNER" })
      .where(and(eq(users.id, successor), holderIsOnlyOwner)),
    ...removal.statements,
  ]);
  const claim = claims[0];
  if (!claim) {
    const [known] = await db.select({ usedAt: emailReleases.usedAt }).from(emailReleases).where(eq(emailReleases.tokenHash, tokenHash)).limit(1);
    if (!known) throw businessRule("token is not a valid release token");
    if (known.usedAt) throw businessRule("token has already been used");
    throw businessRule("token has expired; ask for a new link");
  }
  if (removed.length === 0) throw conflict("This link changed nothing: since it was sent, the address was verified or is no longer held");
  return { email: claim.email, heldUntil: new Date(input.now.getTime() + RELEASE_HOLD_MS) };
}
