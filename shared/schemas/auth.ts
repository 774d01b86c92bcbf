import { z } from "@hono/zod-openapi";
import { ROLES } from "../../db/schema/users.ts";
import { MIN_PASSWORD_LENGTH } from "../auth/passwords.ts";
import { TimestampSchema } from "./common.ts";

export const EmailSchema = z.string().trim().max(254).pipe(z.email()).openapi({ example: "owner@merchant.example" });
/** At least 12 characters (DECISIONS.md); at most 256 so hashing cost stays bounded. */
export const PasswordSchema = z
  .string()
  .min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`)
  .max(256)
  .openapi({ example: "correct horse battery" });
export const RoleSchema = z.enum(ROLES).openapi({ example: "ADMIN" });

export const UserSchema = z.object({ id: z.uuid(), email: z.string(), role: RoleSchema }).openapi("User");

export const SessionSchema = z.object({
  accessToken: z.string().openapi({ description: "JWT for `Authorization: Bearer`" }),
  expiresAt: TimestampSchema,
});
