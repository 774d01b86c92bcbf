import { expect, test } from "bun:test";
import { DrizzleQueryError } from "drizzle-orm/errors";
import { safeErrorFields } from "./logger.ts";

test("a failed query is logged without its bound parameters", () => {
  const cause = new Error("UNIQUE constraint failed: users.email");
  const err = new DrizzleQueryError("insert into users (email, password_hash) values (?, ?)", ["a@x.example", "SECRET-HASH"], cause);
  const fields = safeErrorFields(err);
  const logged = JSON.stringify(fields);
  expect(logged).not.toContain("SECRET-HASH");
  expect(logged).not.toContain("a@x.example");
  expect(fields.error).toContain("insert into users");
  expect(fields.cause).toBe("Error: UNIQUE constraint failed: users.email");
  expect(String(fields.stack)).toMatch(/^\s+at /);
});

test("anything thrown that is not an Error logs only its type", () => {
  expect(safeErrorFields("svc_test_secret")).toEqual({ error: "string" });
});
