import { sign, verify } from "hono/jwt";
import type { Role } from "../../db/schema/users.ts";

/**
 * Dashboard sessions: HS256 JWTs signed with the worker secret JWT_SECRET.
 * The token names the user and the user's session version (`sv`); role,
 * tenant and version are re-read from the database on every request, so a
 * role change, a removal, a log-out or a password change takes effect at
 * once. A token issued before versions existed has none: version 0.
 */
export type SessionClaims = { sub: string; tid: string; role: Role; sv?: number; iat: number; exp: number };

export async function issueSessionToken(
  user: { id: string; tenantId: string; role: Role; sessionVersion: number },
  secret: string,
  now: Date,
  ttlSeconds: number,
): Promise<{ accessToken: string; expiresAt: Date }> {
  const iat = Math.floor(now.getTime() / 1000);
  const exp = iat + ttlSeconds;
  const claims: SessionClaims = { sub: user.id, tid: user.tenantId, role: user.role, sv: user.sessionVersion, iat, exp };
  return { accessToken: await sign(claims, secret, "HS256"), expiresAt: new Date(exp * 1000) };
}

/**
 * Returns the claims, or null for a token that is malformed, forged or
 * expired, or that has no expiry at all: a session always expires (SPEC.md
 * "Authentication"), and this service never issues one without `exp`.
 */
export async function verifySessionToken(token: string, secret: string): Promise<SessionClaims | null> {
  try {
    const payload = await verify(token, secret, "HS256");
    if (typeof payload.sub !== "string" || typeof payload.tid !== "string") return null;
    if (typeof payload.exp !== "number" || !Number.isFinite(payload.exp)) return null;
    if (payload.sv !== undefined && !Number.isSafeInteger(payload.sv)) return null;
    return payload as unknown as SessionClaims;
  } catch {
    return null;
  }
}
