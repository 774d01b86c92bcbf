import { expect, test } from "bun:test";
import { isUuid, newId, randomToken } from "./ids.ts";

test("ids are UUID v4", () => {
  const id = newId();
  expect(isUuid(id)).toBe(true);
  expect(id[14]).toBe("4");
  expect(isUuid("not-a-uuid")).toBe(false);
});

test("random tokens are base62 of the asked length and do not repeat", () => {
  const seen = new Set<string>();
  for (let i = 0; i < 1000; i++) {
    const t = randomToken(24);
    expect(t).toMatch(/^[0-9A-Za-z]{24}$/);
    seen.add(t);
  }
  expect(seen.size).toBe(1000);
});
