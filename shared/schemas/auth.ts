import { z } from "@hono/zod-openapi";
import { ROLES } from "../../db/schema/users.ts";
import { countedLength, hasVisibleCharacter, MIN_PASSWORD_LENGTH } from "../auth/passwords.ts";
import { TimestampSchema } from "./common.ts";

export const EmailSchema = z.string().trim().max(254).pipe(z.email()).openapi({ example: "owner@merchant.example" });
/**
 * At least 12 characters (DECISIONS.md), not all of them whitespace, invisible or blank (twelve
 * spaces are no secret), and 12 without counting the invisible ones (control, formatting or
 * blank characters: eleven U+200B and a "!" are one character); at most 256 so hashing cost
 * stays bounded. Used by signup, adding a user and changing a password alike; one message
 * a password, the first rule it breaks.
 */
export const PasswordSchema = z
  .string()
  .min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`)
  .max(256)
  .superRefine((password, ctx) => {
    if (password.length < MIN_PASSWORD_LENGTH) return;
    if (!hasVisibleCharacter(password))
      ctx.addIssue({ code: "custom", message: "must contain a visible character (not only whitespace, invisible or blank characters)" });
    else if (countedLength(password) < MIN_PASSWORD_LENGTH)
      ctx.addIssue({
        code: "custom",
        message: `must be at least ${MIN_PASSWORD_LENGTH} characters, not counting invisible ones (control, formatting or blank characters)`,
      });
  })
  .openapi({
    description: `At least ${MIN_PASSWORD_LENGTH} characters without counting invisible ones (control, formatting or blank characters such as U+200B), at least one of them visible (a letter, digit, punctuation or symbol: not only whitespace, invisible or blank characters); at most 256.`,
    example: "correct horse battery",
  });
export const RoleSchema = z.enum(ROLES).openapi({ example: "ADMIN" });

export const UserSchema = z.object({ id: z.uuid(), email: z.string(), role: RoleSchema }).openapi("User");

export const SessionSchema = z.object({
  accessToken: z.string().openapi({ description: "JWT for `Authorization: Bearer`" }),
  expiresAt: TimestampSchema,
});
