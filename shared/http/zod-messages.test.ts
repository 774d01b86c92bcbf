import { describe, expect, test } from "bun:test";
import { z } from "zod";
import { fieldMessages } from "./errors.ts";

const Body = z.object({
  name: z.string(),
  note: z.string().nullable(),
  role: z.enum(["COLLECTIONS", "DISBURSEMENT"]),
  amount: z.union([z.string(), z.number()]),
  fee: z.object({ type: z.enum(["FIXED", "PERCENTAGE"]), value: z.string() }),
  tags: z.array(z.string()),
  optional: z.string().optional(),
});
const messagesOf = (input: unknown) => fieldMessages(Body.safeParse(input).error!, "json");

describe("a missing field's message (zod-messages.ts)", () => {
  test("says it is required, with what it takes, for every kind of field, nested ones included", () => {
    expect(messagesOf({ fee: {} })).toEqual([
      "name: is required (expected string)",
      "note: is required (expected string)",
      'role: is required (one of "COLLECTIONS"|"DISBURSEMENT")',
      "amount: is required",
      'fee.type: is required (one of "FIXED"|"PERCENTAGE")',
      "fee.value: is required (expected string)",
      "tags: is required (expected array)",
    ]);
  });

  test("a wrong value keeps zod's own message, and a missing body names the body", () => {
    const wrong = messagesOf({ name: 1, note: null, role: "GAS", amount: true, fee: { type: "FIXED", value: "1.00" }, tags: [] });
    expect(wrong).toEqual([
      "name: Invalid input: expected string, received number",
      'role: Invalid option: expected one of "COLLECTIONS"|"DISBURSEMENT"',
      "amount: Invalid input",
    ]);
    expect(fieldMessages(Body.safeParse(undefined).error!, "json")).toEqual(["body: Invalid input: expected object, received undefined"]);
  });
});
