import { expect, test } from "bun:test";
import { fixedClock, offsetClock } from "./clock.ts";

test("a tenant clock runs its offset ahead of its base", () => {
  const base = fixedClock(new Date("2026-11-21T10:00:00.000Z"));
  const tenant = offsetClock(base, 3 * 86_400_000);
  expect(tenant.now().toISOString()).toBe("2026-11-24T10:00:00.000Z");
  base.advance(1000);
  expect(tenant.now().toISOString()).toBe("2026-11-24T10:00:01.000Z");
});
