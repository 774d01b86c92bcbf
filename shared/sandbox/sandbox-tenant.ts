import { type DomainError, forbidden } from "../domain/errors.ts";
import type { TenantMode } from "../domain/rails.ts";

/** A live tenant's clock never moves and its pools hold real funds. */
export const notASandboxTenant = (): DomainError => forbidden("Sandbox helpers are for sandbox tenants only; this tenant is live");

/** DECISIONS.md "Sandbox helpers": sandbox tenants only; a live tenant gets 403. */
export function requireSandboxTenant(tenant: { mode: TenantMode }): void {
  if (tenant.mode !== "sandbox") throw notASandboxTenant();
}
