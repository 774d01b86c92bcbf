import type { Role } from "../../db/schema/users.ts";
import type { TenantMode } from "../domain/rails.ts";

/** Who is calling, resolved from an API key or a dashboard session. */
export type Principal =
  | { kind: "apiKey"; apiKeyId: string; tenant: TenantRef }
  | { kind: "user"; userId: string; email: string; role: Role; tenant: TenantRef };

export type TenantRef = { id: string; name: string; mode: TenantMode; clockOffsetMs: number; certifiedAt: Date | null };

export const ADMIN_ROLES: readonly Role[] = ["OWNER", "ADMIN"];
