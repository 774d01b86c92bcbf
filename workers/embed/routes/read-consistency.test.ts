import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Db } from "../../../db/create-db.ts";
import type { SessionStart } from "../../../db/read-session.ts";
import { createTestDb } from "../../../db/test-db.ts";
import { bearer, createKey, signUpTenant } from "../../../shared/testing/fixtures.ts";
import { createTestApp, type TestApp } from "../../../shared/testing/harness.ts";
import { createEmbedTestApp } from "../testing/harness.ts";

const ORIGIN = "https://shop.example";
const BOOKMARK = "0000000b-00000005-00004f6e-9f1c2b3a";
let t: TestApp;
let e: ReturnType<typeof createEmbedTestApp>;
let lagging: Awaited<ReturnType<typeof createTestDb>>;
const starts: SessionStart[] = [];
beforeAll(async () => {
  t = await createTestApp();
  e = createEmbedTestApp(t);
  // A replica that has not caught up with anything yet: an empty database with the schema.
  lagging = await createTestDb();
  e.deps.readSessions = (start) => (starts.push(start), { db: (start === "first-unconstrained" ? lagging.db : t.db) as Db, bookmark: () => BOOKMARK });
});
afterAll(() => {
  lagging.close();
  t.close();
});

async function program() {
  const owner = await signUpTenant(t);
  await createKey(t, owner.token);
  const me = (await t.request("GET", "/v1/me", { headers: bearer(owner.token) })).body;
  const p = me.widgetPrograms[0];
  await t.request("PUT", `/v1/widget-programs/${p.id}`, {
    body: { name: p.name, merchantConfigId: p.merchantConfigId, allowedOrigins: [ORIGIN] },
    headers: bearer(owner.token),
  });
  return p.embedKey as string;
}

describe("the widget's reads on read replicas", () => {
  test("GET config reads the program from a replica; one the replica does not know yet is read from the primary, not 404", async () => {
    const embedKey = await program();
    starts.length = 0;
    const res = await e.request("GET", `/v1/embed/${embedKey}/config`, { headers: { origin: ORIGIN } });
    expect(res.status).toBe(200);
    expect(starts).toEqual(["first-unconstrained"]);
    // The browser may read the bookmark of a loan poll: it is exposed to the allowed origin.
    expect(res.headers.get("access-control-expose-headers")).toBe("x-d1-bookmark");
    expect(res.headers.get("access-control-allow-origin")).toBe(ORIGIN);
  });

  test("an unknown key is still 404 after the primary is asked too", async () => {
    const res = await e.request("GET", "/v1/embed/ek_test_AAAAAAAAAAAAAAAAAAAAAAAA/config");
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ statusCode: 404, message: "Embed key not found", error: "Not Found" });
  });

  test("what writes never reads a replica: a quote reads the program from the primary", async () => {
    const embedKey = await program();
    starts.length = 0;
    const res = await e.request("POST", `/v1/embed/${embedKey}/quote`, {
      body: { walletAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA72", amount: "100.00", tenureDays: 7 },
      headers: { origin: ORIGIN },
    });
    expect(res.status).toBe(200);
    expect(starts).toEqual([]);
  });

  test("a loan poll reads from the bookmark it sends back, or from the primary without one; CORS lets the widget send it", async () => {
    const embedKey = await program();
    const preflight = await e.request("OPTIONS", `/v1/embed/${embedKey}/loans/00000000-0000-4000-8000-000000000000`, { headers: { origin: ORIGIN } });
    expect(preflight.headers.get("access-control-allow-headers")).toContain("x-d1-bookmark");
    starts.length = 0;
    const unknown = "00000000-0000-4000-8000-000000000000";
    expect((await e.request("GET", `/v1/embed/${embedKey}/loans/${unknown}`, { headers: { origin: ORIGIN } })).status).toBe(404);
    expect((await e.request("GET", `/v1/embed/${embedKey}/loans/${unknown}`, { headers: { origin: ORIGIN, "x-d1-bookmark": BOOKMARK } })).status).toBe(404);
    expect(starts.filter((s) => s !== "first-unconstrained")).toEqual(["first-primary", { bookmark: BOOKMARK }]);
  });
});
