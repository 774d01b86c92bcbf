import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../testing/harness.ts";
import { signUpTenant } from "../testing/fixtures.ts";
import { DEV_SECRETS_KEY, openSecret } from "../crypto/secret-box.ts";
import { DomainError } from "../domain/errors.ts";
import { createEndpoint, deleteEndpoint, listEndpoints, subscribedEndpoints } from "./endpoints.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const create = (tenantId: string, url: string, events: string[], offsetMs: number) =>
  createEndpoint(
    { db: t.db },
    { tenantId, mode: "sandbox", url, events, environment: "production", secretsKey: DEV_SECRETS_KEY, now: new Date(1_800_000_000_000 + offsetMs) },
  );

test('subscribedEndpoints: the tenant\'s live endpoints with the type or "*", oldest first, with the sealed secret', async () => {
  const a = await signUpTenant(t);
  const b = await signUpTenant(t);
  const all = await create(a.tenantId, "https://all.example.com/", ["*"], 3);
  const funded = await create(a.tenantId, "https://funded.example.com/", ["loan.decision", "loan.funded"], 1);
  const repaid = await create(a.tenantId, "https://repaid.example.com/", ["loan.repaid"], 2);
  const deleted = await create(a.tenantId, "https://deleted.example.com/", ["loan.funded"], 0);
  await create(b.tenantId, "https://other-tenant.example.com/", ["*"], 0);
  await deleteEndpoint({ db: t.db }, { tenantId: a.tenantId, id: deleted.endpoint.id, now: new Date() });

  const forFunded = await subscribedEndpoints(t.db, a.tenantId, "loan.funded");
  expect(forFunded.map((e) => e.id)).toEqual([funded.endpoint.id, all.endpoint.id]);
  expect(await openSecret(forFunded[0]!.secretCiphertext, DEV_SECRETS_KEY)).toBe(funded.secret);
  expect((await subscribedEndpoints(t.db, a.tenantId, "loan.repaid")).map((e) => e.id)).toEqual([repaid.endpoint.id, all.endpoint.id]);
  expect((await subscribedEndpoints(t.db, a.tenantId, "liquidity.low")).map((e) => e.id)).toEqual([all.endpoint.id]);
  // "loan.funded" as a substring of another subscription does not match.
  expect((await subscribedEndpoints(t.db, a.tenantId, "loan.funding_failed")).map((e) => e.id)).toEqual([all.endpoint.id]);
});

test("createEndpoint judges the URL for its environment and stores it normalized", async () => {
  const a = await signUpTenant(t);
  const error = await create(a.tenantId, "https://[::ffff:7f00:1]/", ["*"], 0).catch((e) => e);
  expect(error).toBeInstanceOf(DomainError);
  expect(error.detail).toEqual(["url: must not point to a private, loopback, link-local or reserved address"]);
  const local = await createEndpoint(
    { db: t.db },
    {
      tenantId: a.tenantId,
      mode: "sandbox",
      url: "http://localhost:4000",
      events: ["*"],
      environment: "development",
      secretsKey: DEV_SECRETS_KEY,
      now: new Date(),
    },
  );
  expect(local.endpoint.url).toBe("http://localhost:4000/");
  const page = await listEndpoints({ db: t.db }, { tenantId: a.tenantId, limit: 10 });
  expect(page.data).toEqual([local.endpoint]);
  expect(Object.keys(page.data[0]!).sort()).toEqual(["createdAt", "events", "id", "mode", "pausedUntil", "secretPrefix", "url"]);
});
