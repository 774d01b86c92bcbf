import { z } from "@hono/zod-openapi";
import { ROLES } from "../../db/schema/users.ts";
import { MIN_PASSWORD_LENGTH } from "../auth/passwords.ts";
import { TimestampSchema } from "./common.ts";

export const EmailSchema = z.string().trim().max(254).pipe(z.email()).openapi({ example: "owner@merchant.example" });
/**
 * At least 12 characters (DECISIONS.md), not all of them whitespace (twelve
 * spaces are no secret); at most 256 so hashing cost stays bounded. Used by
 * signup, adding a user and changing a password alike.
 */
export const PasswordSchema = z
  .string()
  .min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`)
  .max(256)
  .regex(/\S/, "must contain a character that is not whitespace")
  .openapi({
    description: `At least ${MIN_PASSWORD_LENGTH} characters, at least one of them not whitespace; at most 256.`,
    example: "correct horse battery",
  });
export const RoleSchema = z.enum(ROLES).openapi({ example: "ADMIN" });

export const UserSchema = z.object({ id: z.uuid(), email: z.string(), role: RoleSchema }).openapi("User");

export const SessionSchema = z.object({
  accessToken: z.string().openapi({ description: "JWT for `Authorization: Bearer`" }),
  expiresAt: TimestampSchema,
});
