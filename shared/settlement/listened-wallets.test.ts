import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Address } from "@ton/core";
import { eq } from "drizzle-orm";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { tenants } from "../../db/schema/tenants.ts";
import { testTonWallet } from "../agreements/testing/test-wallets.ts";
import type { TonNetwork } from "../chains/ton/ton-network.ts";
import { bearer, signUpTenant } from "../testing/fixtures.ts";
import { createTestApp, type TestApp } from "../testing/harness.ts";
import { verifiedEvmWallet } from "../testing/live-tenants.ts";
import { collectionsOwners } from "./collections-wallets.ts";
import { pollTonCollections } from "./ton-listener.ts";

/**
 * Which COLLECTIONS wallets the live listeners read, and how many a run
 * takes: a cron audit had one free sandbox signup verify, delete and add
 * TON COLLECTIONS wallets again (a deleted one is read on for 90 days) until
 * a run outgrew its invocation's subrequests, and every wallet verified after
 * them was never read: their borrowers' repayments were never credited.
 */
const WIDGET_HOST = "embed.svc-credit.test";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function verifiedTonCollections(token: string) {
  const ton = testTonWallet("v5r1");
  const created = await t.request("POST", "/v1/wallets", { headers: bearer(token), body: { chain: "TON", role: "COLLECTIONS", address: ton.address } });
  expect(created.status).toBe(201);
  const ch = (await t.request("POST", `/v1/wallets/${created.body.id}/challenge`, { headers: bearer(token) })).body;
  const reply = await ton.signData({ text: ch.message, domain: WIDGET_HOST, timestamp: Math.floor(t.clock.now().getTime() / 1000) });
  expect((await t.request("POST", `/v1/wallets/${created.body.id}/verify`, { headers: bearer(token), body: { challengeId: ch.id, ...reply } })).status).toBe(
    200,
  );
  return { id: created.body.id as string, raw: Address.parse(ton.address).toRawString() };
}

/** A toncenter double that records which accounts a poll read (and has nothing to show). */
function recordingNetwork() {
  const polled: string[] = [];
  const network: TonNetwork = {
    async transactions(address) {
      polled.push(address.toRawString());
      return [];
    },
    runGetMethod: async () => {
      throw new Error("unused");
    },
    sendExternal: async () => {},
    account: async () => ({ state: "active", balance: 0n }),
  };
  return { polled, network };
}

const certify = (tenantId: string) => t.db.update(tenants).set({ certifiedAt: new Date(), mode: "live" }).where(eq(tenants.id, tenantId));
const MASTER = Address.parse(`0:${"11".repeat(32)}`).toRawString();

describe("the live listeners read the COLLECTIONS wallets of certified tenants only, a bounded number a run", () => {
  test("an uncertified tenant's verified COLLECTIONS wallets, deleted or not, are read by neither listener; once certified, they are", async () => {
    const owner = await signUpTenant(t, "Not Yet Live");
    const ton = await verifiedTonCollections(owner.token);
    const deleted = await verifiedTonCollections(owner.token);
    expect((await t.request("DELETE", `/v1/wallets/${deleted.id}`, { headers: bearer(owner.token) })).status).toBe(204);
    const evm = privateKeyToAccount(generatePrivateKey());
    await verifiedEvmWallet(t, owner.token, { chain: "POLYGON", role: "COLLECTIONS", account: evm });

    const before = recordingNetwork();
    await pollTonCollections({ db: t.db, writer: t.deps.writer, clock: t.clock, network: before.network, master: MASTER });
    expect(before.polled).not.toContain(ton.raw);
    expect(before.polled).not.toContain(deleted.raw);
    expect((await collectionsOwners(t.db, "POLYGON", t.clock.now())).has(evm.address.toLowerCase())).toBe(false);

    await certify(owner.tenantId);
    const after = recordingNetwork();
    await pollTonCollections({ db: t.db, writer: t.deps.writer, clock: t.clock, network: after.network, master: MASTER });
    expect(after.polled).toEqual(expect.arrayContaining([ton.raw, deleted.raw]));
    expect((await collectionsOwners(t.db, "POLYGON", t.clock.now())).get(evm.address.toLowerCase())).toEqual([owner.tenantId]);
  });

  test("more wallets than a run takes are read in turns: with two a run, consecutive minutes read every wallet, the last verified included", async () => {
    const owner = await signUpTenant(t, "Many Wallets Ltd");
    await certify(owner.tenantId);
    for (let i = 0; i < 5; i++) await verifiedTonCollections(owner.token);
    const last = await verifiedTonCollections(owner.token);
    const all = await pollTonCollections({ db: t.db, writer: t.deps.writer, clock: t.clock, network: recordingNetwork().network, master: MASTER });
    const reached = new Set<string>();
    for (let run = 0; run < Math.ceil(all.length / 2); run++) {
      const { polled, network } = recordingNetwork();
      expect(await pollTonCollections({ db: t.db, writer: t.deps.writer, clock: t.clock, network, master: MASTER, maxWallets: 2 })).toHaveLength(2);
      for (const address of polled) reached.add(address);
      t.clock.advance(60_000);
    }
    expect(reached.size).toBe(all.length);
    expect(reached).toContain(last.raw);
  });
});
