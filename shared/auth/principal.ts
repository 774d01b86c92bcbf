import type { Role } from "../../db/schema/users.ts";
import { forbidden } from "../domain/errors.ts";
import type { TenantMode } from "../domain/rails.ts";

/** Who is calling, resolved from an API key or a dashboard session. */
export type Principal =
  | { kind: "apiKey"; apiKeyId: string; mode: TenantMode; tenant: TenantRef }
  /** `sessionVersion`: the version the session token was checked against (a write that must not outlive a log-out guards on it). */
  | { kind: "user"; userId: string; email: string; role: Role; sessionVersion: number; tenant: TenantRef };

export type TenantRef = {
  id: string;
  name: string;
  mode: TenantMode;
  clockOffsetMs: number;
  certifiedAt: Date | null;
  /** As the credential's lookup read it: the version of the tenant's description (shared/tenants/description-cache.ts). */
  descriptionVersion?: number;
};

/**
 * The one mode a request acts and reads in (DECISIONS.md "Modes"): an API
 * key's own; a dashboard session sees both, narrowed by a `mode` filter when
 * it sends one (null: both). A key asking for the other mode is refused, so
 * it can never read across.
 */
export function modeScope(principal: Principal, filter?: TenantMode): TenantMode | null {
  if (principal.kind === "user") return filter ?? null;
  if (filter !== undefined && filter !== principal.mode) {
    throw forbidden(`This is a ${principal.mode} API key; it sees ${principal.mode} data only (mode=${filter} needs a ${filter} key or a dashboard session)`);
  }
  return principal.mode;
}

/** A sandbox API key of a certified tenant: it may no longer change what both modes share (below). */
export const sandboxKeyOnceCertified = (principal: Principal): boolean =>
  principal.kind === "apiKey" && principal.mode === "sandbox" && Boolean(principal.tenant.certifiedAt);

/**
 * For what both modes share (the underwriting policy, borrowers' KYC): once
 * the tenant is certified, live loans depend on it, so a sandbox key may no
 * longer change it; a live key or a dashboard session does.
 */
export function requireLiveWriterOnceCertified(principal: Principal, what: string): void {
  if (sandboxKeyOnceCertified(principal)) {
    throw forbidden(`${what} applies to live loans too once the tenant is certified; change it with a live API key (svc_live_…) or from the dashboard`);
  }
}

/**
 * The mode a request's writes are stamped in: an API key's own; for a
 * dashboard session, the tenant's (so what both modes share, such as the
 * policy, is timed on the real clock once the tenant is live).
 */
export const actingMode = (principal: Principal): TenantMode => (principal.kind === "apiKey" ? principal.mode : principal.tenant.mode);

export const ADMIN_ROLES: readonly Role[] = ["OWNER", "ADMIN"];
