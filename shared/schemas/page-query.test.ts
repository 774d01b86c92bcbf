import { describe, expect, test } from "bun:test";
import { createTestApp } from "../testing/harness.ts";
import { createKey, signUpTenant } from "../testing/fixtures.ts";
import { PageQuerySchema } from "./common.ts";

describe("a list's limit", () => {
  test("is a whole number from 1 to 100 in plain digits (default 20); what a looser parse would read is refused", () => {
    const limit = (v?: string) => {
      const r = PageQuerySchema.safeParse(v === undefined ? {} : { limit: v });
      return r.success ? r.data.limit : r.error.issues.map((i) => i.message);
    };
    expect(limit()).toBe(20);
    expect(limit("1")).toBe(1);
    expect(limit("100")).toBe(100);
    expect(limit("007")).toBe(7);
    // Found by an audit: 0x10 listed 16, and 1e1, 10.0, +5 and " 5" were read as numbers.
    for (const bad of ["0x10", "1e1", "10.0", "+5", " 5", "5 ", "0", "101", "-1", "1.5", "abc", "", "99999"])
      expect(limit(bad)).toEqual(["must be a whole number from 1 to 100, in digits"]);
  });

  test("on the routes: 400 naming limit, with the spec's error body (loans and events)", async () => {
    const t = await createTestApp();
    try {
      const owner = await signUpTenant(t);
      const { key } = await createKey(t, owner.token);
      for (const path of ["/v1/loans?limit=0x10", "/v1/events?limit=1e1"]) {
        const res = await t.request("GET", path, { headers: { "x-api-key": key } });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ statusCode: 400, message: ["limit: must be a whole number from 1 to 100, in digits"], error: "Bad Request" });
      }
      expect((await t.request("GET", "/v1/loans?limit=16", { headers: { "x-api-key": key } })).status).toBe(200);
    } finally {
      t.close();
    }
  });
});
