import { z } from "@hono/zod-openapi";
import { ROLES } from "../../db/schema/users.ts";
import { hasVisibleCharacter, MIN_PASSWORD_LENGTH } from "../auth/passwords.ts";
import { TimestampSchema } from "./common.ts";

export const EmailSchema = z.string().trim().max(254).pipe(z.email()).openapi({ example: "owner@merchant.example" });
/**
 * At least 12 characters (DECISIONS.md), not all of them whitespace, invisible or blank (twelve
 * spaces are no secret); at most 256 so hashing cost stays bounded. Used by
 * signup, adding a user and changing a password alike.
 */
export const PasswordSchema = z
  .string()
  .min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`)
  .max(256)
  .refine(hasVisibleCharacter, "must contain a visible character (not only whitespace, invisible or blank characters)")
  .openapi({
    description: `At least ${MIN_PASSWORD_LENGTH} characters, at least one of them visible (a letter, digit, punctuation or symbol: not only whitespace, invisible or blank characters); at most 256.`,
    example: "correct horse battery",
  });
export const RoleSchema = z.enum(ROLES).openapi({ example: "ADMIN" });

export const UserSchema = z.object({ id: z.uuid(), email: z.string(), role: RoleSchema }).openapi("User");

export const SessionSchema = z.object({
  accessToken: z.string().openapi({ description: "JWT for `Authorization: Bearer`" }),
  expiresAt: TimestampSchema,
});
