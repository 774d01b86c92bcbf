import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { mailbox, notifications } from "../../../../db/schema/webhooks.ts";
import { tenants } from "../../../../db/schema/tenants.ts";
import { wallets } from "../../../../db/schema/wallets.ts";
import { events } from "../../../../db/schema/events.ts";
import { testTonWallet } from "../../../../shared/agreements/testing/test-wallets.ts";
import { sendNotificationEmail } from "../../../../shared/notifications/send-notification-email.ts";
import { chainPortDouble, type ChainPortDouble } from "../../../../shared/testing/chain-port-double.ts";
import { addUserWithRole, bearer, signUpTenant } from "../../../../shared/testing/fixtures.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import { checkGasWallets } from "../../../../shared/wallets/gas-alerts.ts";
import { MAX_WALLETS_PER_ROLE } from "../../../../shared/wallets/wallet-verbs.ts";
import { drainOutbox } from "../../../../shared/webhooks/relay-outbox.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const UNKNOWN_ID = "7d2f4a0e-7c1b-4b8e-9a57-0c6f0c2d9e11";
const WIDGET_HOST = "embed.svc-credit.test";
const ETHER = 10n ** 18n;

let app: TestApp;
let chain: ChainPortDouble;
let owner: Awaited<ReturnType<typeof signUpTenant>>;
let member: string;
let other: Awaited<ReturnType<typeof signUpTenant>>;

beforeAll(async () => {
  app = await createTestApp();
  // A live chain that answers (test only): balances per (chain, address).
  chain = chainPortDouble(app.deps.chain);
  app.deps.chain = chain;
  owner = await signUpTenant(app, "Acme Pay");
  member = (await addUserWithRole(app, owner.token, "MEMBER")).token;
  other = await signUpTenant(app, "Other Co");
});
afterAll(() => app.close());

const evmAccount = () => privateKeyToAccount(generatePrivateKey());
const create = (body: unknown, token = owner.token) => app.request("POST", "/v1/wallets", { headers: bearer(token), body });
const get = (id: string, token = owner.token) => app.request("GET", `/v1/wallets/${id}`, { headers: bearer(token) });
const challenge = (id: string, token = owner.token) => app.request("POST", `/v1/wallets/${id}/challenge`, { headers: bearer(token) });
const verify = (id: string, body: unknown, token = owner.token) => app.request("POST", `/v1/wallets/${id}/verify`, { headers: bearer(token), body });
const expectFieldError = (res: { status: number; body: any }, field: string) => {
  expect(res.status).toBe(400);
  expect(res.body.statusCode).toBe(400);
  expect(res.body.error).toBe("Bad Request");
  // "field: message": the dashboard shows a message beside the field its prefix names.
  expect(res.body.message.some((m: string) => m.startsWith(`${field}: `))).toBe(true);
};

describe("wallets: CRUD", () => {
  test("POST adds an unverified wallet, address canonical; GET shows it with balances from the chain", async () => {
    const account = evmAccount();
    chain.setBalances("POLYGON", account.address, { stablecoin: 2_500_500_000n, native: (3n * ETHER) / 4n });
    const res = await create({ chain: "POLYGON", role: "DISBURSEMENT", address: account.address.toLowerCase() });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID),
      chain: "POLYGON",
      role: "DISBURSEMENT",
      address: account.address,
      controlVerified: false,
      verifiedAt: null,
      stablecoinBalance: "2500.50",
      nativeBalance: "0.75",
      gasThreshold: null,
      createdAt: app.clock.now().toISOString(),
    });
    const got = await get(res.body.id);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
    const list = await app.request("GET", "/v1/wallets?limit=100", { headers: bearer(owner.token) });
    expect(list.status).toBe(200);
    expect(list.body.data).toContainEqual(res.body);
    expect(list.body.nextCursor).toBeNull();
  });

  test("TON: the address is stored raw, and the native balance has 9 decimals", async () => {
    const ton = testTonWallet();
    const created = (await create({ chain: "TON", role: "COLLECTIONS", address: ton.address })).body;
    expect(created.address).toMatch(/^0:[0-9a-f]{64}$/);
    chain.setBalances("TON", created.address, { stablecoin: 1_000_000n, native: 1_500_000_000n });
    expect((await get(created.id)).body).toMatchObject({ stablecoinBalance: "1.00", nativeBalance: "1.5" });
  });

  test("one address may hold several roles; the same role twice is 409, in any spelling", async () => {
    const account = evmAccount();
    const roles = ["TREASURY", "DISBURSEMENT", "COLLECTIONS", "GAS"];
    const ids: string[] = [];
    for (const role of roles) {
      const res = await create({ chain: "BASE", role, address: account.address });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    expect(new Set(ids).size).toBe(4);
    const again = await create({ chain: "BASE", role: "GAS", address: account.address.toLowerCase() });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ statusCode: 409, message: `This tenant already has ${account.address} as its GAS wallet on BASE`, error: "Conflict" });
    // Another chain, or another tenant, is another wallet.
    expect((await create({ chain: "POLYGON", role: "GAS", address: account.address })).status).toBe(201);
    expect((await create({ chain: "BASE", role: "GAS", address: account.address }, other.token)).status).toBe(201);
  });

  test(`at most ${MAX_WALLETS_PER_ROLE} wallets per chain and role (each COLLECTIONS wallet joins the listener's reads for every tenant): 409 beyond; a deletion makes room`, async () => {
    const m = await signUpTenant(app, "Many Wallets");
    const ids: string[] = [];
    for (let i = 0; i < MAX_WALLETS_PER_ROLE; i++) {
      const res = await create({ chain: "POLYGON", role: "COLLECTIONS", address: evmAccount().address }, m.token);
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    const refused = await create({ chain: "POLYGON", role: "COLLECTIONS", address: evmAccount().address }, m.token);
    expect(refused.status).toBe(409);
    expect(refused.body.message).toContain(`${MAX_WALLETS_PER_ROLE} COLLECTIONS wallets on POLYGON`);
    // Another role or chain is counted apart.
    expect((await create({ chain: "BASE", role: "COLLECTIONS", address: evmAccount().address }, m.token)).status).toBe(201);
    expect((await app.request("DELETE", `/v1/wallets/${ids[0]}`, { headers: bearer(m.token) })).status).toBe(204);
    expect((await create({ chain: "POLYGON", role: "COLLECTIONS", address: evmAccount().address }, m.token)).status).toBe(201);
  });

  test("PUT sets and clears a GAS threshold in native units; other roles take none", async () => {
    const gas = (await create({ chain: "POLYGON", role: "GAS", address: evmAccount().address })).body;
    const set = await app.request("PUT", `/v1/wallets/${gas.id}`, { headers: bearer(owner.token), body: { gasThreshold: "0.5" } });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ ...gas, gasThreshold: "0.5" });
    const [row] = await app.db.select().from(wallets).where(eq(wallets.id, gas.id));
    expect(row?.gasThreshold).toBe((ETHER / 2n).toString());
    const precise = await app.request("PUT", `/v1/wallets/${gas.id}`, { headers: bearer(owner.token), body: { gasThreshold: "0.000000000000000001" } });
    expect(precise.body.gasThreshold).toBe("0.000000000000000001");
    const cleared = await app.request("PUT", `/v1/wallets/${gas.id}`, { headers: bearer(owner.token), body: { gasThreshold: null } });
    expect(cleared.body.gasThreshold).toBeNull();

    const disbursement = (await create({ chain: "POLYGON", role: "DISBURSEMENT", address: evmAccount().address })).body;
    const refused = await app.request("PUT", `/v1/wallets/${disbursement.id}`, { headers: bearer(owner.token), body: { gasThreshold: "1" } });
    expectFieldError(refused, "gasThreshold");
    expect(refused.body.message).toEqual(["gasThreshold: only a GAS wallet has a gas threshold; this wallet is DISBURSEMENT"]);
  });

  test.each([
    ["a negative amount", "-1"],
    ["an exponent", "1e18"],
    ["zero", "0"],
    ["an empty string", ""],
    ["19 decimals on an EVM chain", "0.0000000000000000001"],
    ["spaces", " 1"],
    ["a number", 1],
  ])("PUT with %s as gasThreshold: 400 naming gasThreshold", async (_name, value) => {
    const gas = (await create({ chain: "BASE", role: "GAS", address: evmAccount().address })).body;
    expectFieldError(await app.request("PUT", `/v1/wallets/${gas.id}`, { headers: bearer(owner.token), body: { gasThreshold: value } }), "gasThreshold");
    expect((await get(gas.id)).body.gasThreshold).toBeNull();
  });

  test("TON thresholds have at most 9 decimals", async () => {
    const gas = (await create({ chain: "TON", role: "GAS", address: testTonWallet().address })).body;
    const ok = await app.request("PUT", `/v1/wallets/${gas.id}`, { headers: bearer(owner.token), body: { gasThreshold: "0.000000001" } });
    expect(ok.body.gasThreshold).toBe("0.000000001");
    const bad = await app.request("PUT", `/v1/wallets/${gas.id}`, { headers: bearer(owner.token), body: { gasThreshold: "0.0000000001" } });
    expect(bad.body.message).toEqual(["gasThreshold: has more than 9 decimals, the native coin's precision"]);
  });

  test("DELETE soft-deletes: 204, then 404 everywhere; the same wallet may be added again", async () => {
    const account = evmAccount();
    const created = (await create({ chain: "POLYGON", role: "TREASURY", address: account.address })).body;
    const res = await app.request("DELETE", `/v1/wallets/${created.id}`, { headers: bearer(owner.token) });
    expect(res.status).toBe(204);
    expect(res.body).toBeNull();
    const gone = await get(created.id);
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ statusCode: 404, message: "Wallet not found", error: "Not Found" });
    expect((await app.request("DELETE", `/v1/wallets/${created.id}`, { headers: bearer(owner.token) })).status).toBe(404);
    expect((await app.request("PUT", `/v1/wallets/${created.id}`, { headers: bearer(owner.token), body: { gasThreshold: null } })).status).toBe(404);
    expect((await challenge(created.id)).status).toBe(404);
    const list = await app.request("GET", "/v1/wallets?limit=100", { headers: bearer(owner.token) });
    expect(list.body.data.some((w: { id: string }) => w.id === created.id)).toBe(false);
    const [row] = await app.db.select().from(wallets).where(eq(wallets.id, created.id));
    expect(row?.deletedAt).toEqual(app.clock.now());
    expect((await create({ chain: "POLYGON", role: "TREASURY", address: account.address })).status).toBe(201);
  });

  test("without a balances capability (every deployment today) balances are null, not 0", async () => {
    const fresh = await createTestApp();
    try {
      const t = await signUpTenant(fresh, "No Chain");
      const res = await fresh.request("POST", "/v1/wallets", {
        headers: bearer(t.token),
        body: { chain: "BASE", role: "DISBURSEMENT", address: evmAccount().address },
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ stablecoinBalance: null, nativeBalance: null });
    } finally {
      fresh.close();
    }
  });
});

describe("wallets: validation", () => {
  test.each(["POLYGON_AMOY", "BASE_SEPOLIA", "TON_TESTNET", "SOLANA_DEVNET"])("a sandbox chain (%s): 400 naming chain", async (sandbox) => {
    const res = await create({ chain: sandbox, role: "DISBURSEMENT", address: evmAccount().address });
    expectFieldError(res, "chain");
    expect(res.body.message[0]).toContain("live chain");
  });

  test.each([
    ["an unknown chain", { chain: "ETHEREUM" }, "chain"],
    ["an unknown role", { role: "OPERATOR" }, "role"],
    ["a lowercase role", { role: "gas" }, "role"],
    ["a TON address on an EVM chain", { address: "0:" + "a".repeat(64) }, "address"],
    ["a bad EIP-55 checksum", { address: "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96046".replace("dA6", "Da6") }, "address"],
    ["a short address", { address: "0x1234" }, "address"],
    ["a missing address", { address: undefined }, "address"],
    ["an address as a number", { address: 42 }, "address"],
  ])("%s: 400 naming the field", async (_name, over, field) => {
    expectFieldError(await create({ chain: "POLYGON", role: "GAS", address: evmAccount().address, ...over }), field);
  });

  test("an EVM address on TON: 400 naming address", async () => {
    expectFieldError(await create({ chain: "TON", role: "GAS", address: evmAccount().address }), "address");
  });

  test("hostile values answer 400, never 500", async () => {
    for (const field of ["chain", "role", "address"]) {
      for (const value of [null, true, -1, "", "x".repeat(5000), [], {}]) {
        const res = await create({ chain: "POLYGON", role: "GAS", address: evmAccount().address, [field]: value });
        expect(res.status).toBe(400);
      }
    }
  });
});

describe("wallets: proof of control, EVM", () => {
  test("challenge → EIP-191 signature by the wallet's key → verified", async () => {
    const account = evmAccount();
    const wallet = (await create({ chain: "POLYGON", role: "DISBURSEMENT", address: account.address })).body;
    const ch = await challenge(wallet.id);
    expect(ch.status).toBe(201);
    expect(ch.body).toEqual({
      id: expect.stringMatching(UUID),
      message: expect.any(String),
      expiresAt: new Date(app.clock.now().getTime() + 300_000).toISOString(),
    });
    for (const part of ["Acme Pay", owner.tenantId, "POLYGON", "DISBURSEMENT", account.address, ch.body.id, ch.body.expiresAt]) {
      expect(ch.body.message).toContain(part);
    }
    const signature = await account.signMessage({ message: ch.body.message });
    const res = await verify(wallet.id, { challengeId: ch.body.id, signature });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...wallet, controlVerified: true, verifiedAt: app.clock.now().toISOString() });
    expect((await get(wallet.id)).body.controlVerified).toBe(true);

    // Single use.
    const replay = await verify(wallet.id, { challengeId: ch.body.id, signature });
    expectFieldError(replay, "challengeId");
    expect(replay.body.message).toEqual(["challengeId: has already been used; ask for a new challenge"]);
  });

  test("a signature from another key: 400, the wallet stays unverified, the challenge still usable", async () => {
    const account = evmAccount();
    const wallet = (await create({ chain: "BASE", role: "COLLECTIONS", address: account.address })).body;
    const ch = (await challenge(wallet.id)).body;
    const forged = await evmAccount().signMessage({ message: ch.message });
    const res = await verify(wallet.id, { challengeId: ch.id, signature: forged });
    expectFieldError(res, "signature");
    expect(res.body.message).toEqual(["signature: is not the wallet's EIP-191 signature of the challenge message"]);
    expect((await get(wallet.id)).body).toMatchObject({ controlVerified: false, verifiedAt: null });
    // The wallet's own signature of a different text does not pass either.
    const otherText = await account.signMessage({ message: `${ch.message} ` });
    expectFieldError(await verify(wallet.id, { challengeId: ch.id, signature: otherText }), "signature");
    const good = await verify(wallet.id, { challengeId: ch.id, signature: await account.signMessage({ message: ch.message }) });
    expect(good.status).toBe(200);
  });

  test("a malformed signature: 400, never 500", async () => {
    const wallet = (await create({ chain: "BASE", role: "TREASURY", address: evmAccount().address })).body;
    const ch = (await challenge(wallet.id)).body;
    for (const signature of ["", "0x", "0x1234", "not hex", `0x${"ff".repeat(65)}`, "x".repeat(900)]) {
      expect((await verify(wallet.id, { challengeId: ch.id, signature })).status).toBe(400);
    }
    expect((await get(wallet.id)).body.controlVerified).toBe(false);
  });

  test("an expired challenge: 400 naming challengeId", async () => {
    const account = evmAccount();
    const wallet = (await create({ chain: "POLYGON", role: "TREASURY", address: account.address })).body;
    const ch = (await challenge(wallet.id)).body;
    const signature = await account.signMessage({ message: ch.message });
    app.clock.advance(5 * 60 * 1000);
    const res = await verify(wallet.id, { challengeId: ch.id, signature });
    expectFieldError(res, "challengeId");
    expect(res.body.message[0]).toContain("expired");
    expect((await get(wallet.id)).body.controlVerified).toBe(false);
  });

  test("a challenge of another wallet, or an unknown one: 400 naming challengeId", async () => {
    const account = evmAccount();
    const a = (await create({ chain: "POLYGON", role: "COLLECTIONS", address: account.address })).body;
    const b = (await create({ chain: "POLYGON", role: "GAS", address: account.address })).body;
    const chA = (await challenge(a.id)).body;
    const signature = await account.signMessage({ message: chA.message });
    expectFieldError(await verify(b.id, { challengeId: chA.id, signature }), "challengeId");
    expectFieldError(await verify(b.id, { challengeId: UNKNOWN_ID, signature }), "challengeId");
    expect((await get(b.id)).body.controlVerified).toBe(false);
  });

  test("another tenant's wallet: 404 on challenge and verify, and its challenge does not verify it", async () => {
    const account = evmAccount();
    const theirs = (await create({ chain: "POLYGON", role: "DISBURSEMENT", address: account.address }, other.token)).body;
    expect((await challenge(theirs.id)).status).toBe(404);
    const ch = (await challenge(theirs.id, other.token)).body;
    const signature = await account.signMessage({ message: ch.message });
    const res = await verify(theirs.id, { challengeId: ch.id, signature });
    expect(res.status).toBe(404);
    expect(res.body.message).toBe("Wallet not found");
    expect((await get(theirs.id, other.token)).body.controlVerified).toBe(false);
  });
});

describe("wallets: proof of control, TON", () => {
  for (const version of ["v4", "v5r1"] as const) {
    test(`a ${version} wallet's TON Connect signData of the challenge → verified`, async () => {
      const ton = testTonWallet(version);
      const wallet = (await create({ chain: "TON", role: "DISBURSEMENT", address: ton.address })).body;
      const ch = (await challenge(wallet.id)).body;
      const reply = await ton.signData({ text: ch.message, domain: WIDGET_HOST, timestamp: Math.floor(app.clock.now().getTime() / 1000) });
      const res = await verify(wallet.id, { challengeId: ch.id, ...reply });
      expect(res.status).toBe(200);
      expect(res.body.controlVerified).toBe(true);
    });
  }

  test("another key's signature, a foreign domain, or missing TON fields: 400 naming the field; still unverified", async () => {
    const ton = testTonWallet();
    const wallet = (await create({ chain: "TON", role: "COLLECTIONS", address: ton.address })).body;
    const ch = (await challenge(wallet.id)).body;
    const timestamp = Math.floor(app.clock.now().getTime() / 1000);
    const impostor = await testTonWallet().signData({ text: ch.message, domain: WIDGET_HOST, timestamp });
    expectFieldError(await verify(wallet.id, { challengeId: ch.id, ...impostor }), "publicKey");
    // The impostor's signature with the wallet's own key claimed.
    expectFieldError(await verify(wallet.id, { challengeId: ch.id, ...impostor, publicKey: ton.publicKey }), "signature");
    const foreign = await ton.signData({ text: ch.message, domain: "evil.example", timestamp });
    expectFieldError(await verify(wallet.id, { challengeId: ch.id, ...foreign }), "domain");
    const good = await ton.signData({ text: ch.message, domain: WIDGET_HOST, timestamp });
    expectFieldError(await verify(wallet.id, { challengeId: ch.id, signature: good.signature }), "publicKey");
    expect((await get(wallet.id)).body.controlVerified).toBe(false);
    expect((await verify(wallet.id, { challengeId: ch.id, ...good })).status).toBe(200);
  });
});

describe("wallets: gas alerts", () => {
  const tick = () => checkGasWallets({ db: app.db, chain, clock: app.clock });
  // Gas alarms are for tenants certified for live (the only ones that fund from these wallets).
  beforeAll(async () => {
    await app.db.update(tenants).set({ certifiedAt: new Date(), mode: "live" }).where(eq(tenants.id, owner.tenantId));
  });
  const gasEvents = async (walletId: string) =>
    (
      await app.db
        .select()
        .from(events)
        .where(and(eq(events.tenantId, owner.tenantId), eq(events.type, "wallet.gas_low")))
    ).filter((e) => (e.envelope.data as { wallet: { id: string } }).wallet.id === walletId);

  /** A GAS wallet on `chain` whose control is proved, with `gasThreshold`. */
  async function verifiedGasWallet(chainName: "POLYGON" | "BASE", gasThreshold: string) {
    const account = evmAccount();
    const gas = (await create({ chain: chainName, role: "GAS", address: account.address })).body;
    const ch = await challenge(gas.id);
    expect((await verify(gas.id, { challengeId: ch.body.id, signature: await account.signMessage({ message: ch.body.message }) })).status).toBe(200);
    expect((await app.request("PUT", `/v1/wallets/${gas.id}`, { headers: bearer(owner.token), body: { gasThreshold } })).status).toBe(200);
    return { account, gas };
  }

  test("one wallet.gas_low per dip, a notification and an owner e-mail; again only after recovering", async () => {
    const { account, gas } = await verifiedGasWallet("POLYGON", "0.5");
    chain.setBalances("POLYGON", account.address, { native: ETHER });
    await tick();
    expect(await gasEvents(gas.id)).toHaveLength(0);

    chain.setBalances("POLYGON", account.address, { native: ETHER / 4n });
    await tick();
    await tick();
    await tick();
    const first = await gasEvents(gas.id);
    expect(first).toHaveLength(1);
    expect(first[0]!.envelope).toMatchObject({
      type: "wallet.gas_low",
      tenantId: owner.tenantId,
      data: { wallet: { id: gas.id, chain: "POLYGON", role: "GAS", address: account.address, nativeBalance: "0.25", gasThreshold: "0.5" } },
    });

    // Through the outbox like every event: the dashboard notification and the owner's e-mail.
    await drainOutbox({ db: app.db, queue: app.deps.queue }, { now: app.clock.now() });
    const [notification] = await app.db.select().from(notifications).where(eq(notifications.eventId, first[0]!.id));
    expect(notification).toMatchObject({ eventType: "wallet.gas_low", title: "Gas wallet running low", emailTo: owner.email, emailStatus: "PENDING" });
    expect(notification!.body).toContain(account.address);
    await sendNotificationEmail({ db: app.db, mail: app.deps.mail, clock: app.clock }, notification!.id);
    const mails = await app.db.select().from(mailbox).where(eq(mailbox.toAddress, owner.email));
    expect(mails.some((m) => m.subject.includes("Gas wallet running low"))).toBe(true);
    const listed = await app.request("GET", "/v1/events?type=wallet.gas_low", { headers: bearer(owner.token) });
    expect(listed.status).toBe(200);

    // Back at the threshold re-arms; the next dip alerts once more.
    chain.setBalances("POLYGON", account.address, { native: ETHER / 2n });
    await tick();
    expect(await gasEvents(gas.id)).toHaveLength(1);
    chain.setBalances("POLYGON", account.address, { native: ETHER / 10n });
    await tick();
    await tick();
    expect(await gasEvents(gas.id)).toHaveLength(2);

    // Saving the same threshold again within the dip is no new dip (each save re-armed the alarm: an e-mail a save).
    for (let i = 0; i < 2; i++) {
      expect((await app.request("PUT", `/v1/wallets/${gas.id}`, { headers: bearer(owner.token), body: { gasThreshold: "0.5" } })).status).toBe(200);
      await tick();
    }
    expect(await gasEvents(gas.id)).toHaveLength(2);
    // A new threshold is a new alarm: still under it, it alerts once.
    expect((await app.request("PUT", `/v1/wallets/${gas.id}`, { headers: bearer(owner.token), body: { gasThreshold: "0.4" } })).status).toBe(200);
    await tick();
    await tick();
    expect(await gasEvents(gas.id)).toHaveLength(3);
  });

  test("a tenant not certified for live: its verified GAS wallets are not read (a free signup's 30 wallets cost the job's RPC budget); more wallets than a run takes are read in turns", async () => {
    const before = await tick();
    const account = evmAccount();
    const gas = (await create({ chain: "BASE", role: "GAS", address: account.address }, other.token)).body;
    const ch = await challenge(gas.id, other.token);
    const signature = await account.signMessage({ message: ch.body.message });
    expect((await verify(gas.id, { challengeId: ch.body.id, signature }, other.token)).status).toBe(200);
    expect((await app.request("PUT", `/v1/wallets/${gas.id}`, { headers: bearer(other.token), body: { gasThreshold: "1" } })).status).toBe(200);
    chain.setBalances("BASE", account.address, { native: 0n });
    expect((await tick()).checked).toBe(before.checked);
    expect(await gasEvents(gas.id)).toHaveLength(0);

    // Turns: one wallet a run, consecutive minutes read each of the owner's verified wallets once.
    const seen = new Set<string>();
    const counting = {
      ...chain,
      balances: async (c: Parameters<NonNullable<typeof chain.balances>>[0], address: string) => {
        seen.add(address);
        return chain.balances!(c, address);
      },
    };
    for (let run = 0; run < before.checked; run++) {
      expect((await checkGasWallets({ db: app.db, chain: counting, clock: app.clock }, { maxWallets: 1 })).checked).toBe(1);
      app.clock.advance(60_000);
    }
    expect(seen.size).toBe(before.checked);
  });

  test("an unverified GAS wallet (anyone's address) is never read nor alerted on: each one was an RPC call a tick and a live alert about a stranger's wallet", async () => {
    const before = await tick();
    const stranger = evmAccount();
    const gas = (await create({ chain: "POLYGON", role: "GAS", address: stranger.address })).body;
    expect((await app.request("PUT", `/v1/wallets/${gas.id}`, { headers: bearer(owner.token), body: { gasThreshold: "1" } })).status).toBe(200);
    chain.setBalances("POLYGON", stranger.address, { native: 10n });
    const reads = chain.balanceReads;
    const after = await tick();
    expect(after.checked).toBe(before.checked);
    expect(chain.balanceReads - reads).toBe(before.checked);
    expect(await gasEvents(gas.id)).toHaveLength(0);
  });

  test("no threshold, another role, a deleted wallet or an unreadable balance: no alert", async () => {
    const noThreshold = evmAccount();
    await create({ chain: "BASE", role: "GAS", address: noThreshold.address });
    chain.setBalances("BASE", noThreshold.address, { native: 0n });
    const deleted = (await create({ chain: "BASE", role: "GAS", address: evmAccount().address })).body;
    await app.request("PUT", `/v1/wallets/${deleted.id}`, { headers: bearer(owner.token), body: { gasThreshold: "1" } });
    await app.request("DELETE", `/v1/wallets/${deleted.id}`, { headers: bearer(owner.token) });
    const before = (await app.db.select().from(events).where(eq(events.type, "wallet.gas_low"))).length;
    await tick();
    expect((await app.db.select().from(events).where(eq(events.type, "wallet.gas_low"))).length).toBe(before);

    const withoutPort = await checkGasWallets({ db: app.db, chain: { ...chain, balances: undefined }, clock: app.clock });
    expect(withoutPort).toEqual({ checked: 0, unread: 0, alerted: 0, rearmed: 0 });
  });
});

describe("wallets: security", () => {
  test("a MEMBER may read but not write", async () => {
    const account = evmAccount();
    const wallet = (await create({ chain: "POLYGON", role: "GAS", address: account.address })).body;
    expect((await app.request("GET", "/v1/wallets", { headers: bearer(member) })).status).toBe(200);
    expect((await get(wallet.id, member)).status).toBe(200);
    const denied = await create({ chain: "POLYGON", role: "TREASURY", address: account.address }, member);
    expect(denied.status).toBe(403);
    expect(denied.body.error).toBe("Forbidden");
    expect((await app.request("PUT", `/v1/wallets/${wallet.id}`, { headers: bearer(member), body: { gasThreshold: "1" } })).status).toBe(403);
    expect((await app.request("DELETE", `/v1/wallets/${wallet.id}`, { headers: bearer(member) })).status).toBe(403);
    expect((await challenge(wallet.id, member)).status).toBe(403);
    expect((await verify(wallet.id, { challengeId: UNKNOWN_ID, signature: "0x" }, member)).status).toBe(403);
    expect((await get(wallet.id)).body).toEqual(wallet);
  });

  test("another tenant's wallet: 404 on GET, PUT and DELETE, untouched; lists show only the caller's", async () => {
    const theirs = (await create({ chain: "BASE", role: "GAS", address: evmAccount().address }, other.token)).body;
    for (const [method, body] of [["GET"], ["PUT", { gasThreshold: "1" }], ["DELETE"]] as const) {
      const res = await app.request(method, `/v1/wallets/${theirs.id}`, { headers: bearer(owner.token), body });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ statusCode: 404, message: "Wallet not found", error: "Not Found" });
    }
    expect((await get(theirs.id, other.token)).body).toEqual(theirs);
    const mine = await app.request("GET", "/v1/wallets?limit=100", { headers: bearer(owner.token) });
    expect(mine.body.data.some((w: { id: string }) => w.id === theirs.id)).toBe(false);
  });

  test("no request in this file answered 500", () => {
    expect(app.logs.filter((line) => line.includes("unhandled error"))).toEqual([]);
  });
});
