import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Buffer } from "node:buffer";
import { keyPairFromSeed } from "@ton/crypto";
import { WalletContractV5R1 } from "@ton/ton";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { testTonWallet } from "../../shared/agreements/testing/test-wallets.ts";
import { signUpMerchant, startTestStack, type TestStack } from "./integration.ts";

/**
 * Live wallets through the bundled api and cron workers on workerd and D1:
 * the migration's partial unique index (409 on a duplicate role, a deleted
 * wallet addable again), proof of control by an EIP-191 signature, balances
 * null in a deployment (no live adapter reads them yet), and the gas job
 * running on the cron worker without a readable balance.
 */
describe("live wallets on workerd", () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack();
  }, 120_000);
  afterAll(() => stack?.dispose());

  test("add, duplicate, prove control, set a threshold, run the gas job, delete and add again", async () => {
    const m = await signUpMerchant(stack, "Wallets");
    const account = privateKeyToAccount(generatePrivateKey());
    const body = { chain: "BASE", role: "GAS", address: account.address.toLowerCase() };
    const created = await m.dashboard("/v1/wallets", { json: body });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ address: account.address, controlVerified: false, stablecoinBalance: null, nativeBalance: null });
    expect((await m.dashboard("/v1/wallets", { json: body })).status).toBe(409);
    expect((await m.dashboard("/v1/wallets", { json: { ...body, chain: "BASE_SEPOLIA" } })).status).toBe(400);

    const challenge = await m.dashboard(`/v1/wallets/${created.body.id}/challenge`, { method: "POST" });
    expect(challenge.status).toBe(201);
    const forged = await privateKeyToAccount(generatePrivateKey()).signMessage({ message: challenge.body.message });
    expect((await m.dashboard(`/v1/wallets/${created.body.id}/verify`, { json: { challengeId: challenge.body.id, signature: forged } })).status).toBe(400);
    const signature = await account.signMessage({ message: challenge.body.message });
    const verified = await m.dashboard(`/v1/wallets/${created.body.id}/verify`, { json: { challengeId: challenge.body.id, signature } });
    expect(verified.status).toBe(200);
    expect(verified.body.controlVerified).toBe(true);

    const put = await m.dashboard(`/v1/wallets/${created.body.id}`, { method: "PUT", json: { gasThreshold: "0.5" } });
    expect(put.body.gasThreshold).toBe("0.5");
    expect((await stack.scheduled()).outcome).toBe("ok");
    const db = await stack.db();
    const gasLow = await db.prepare("SELECT count(*) AS n FROM events WHERE type = 'wallet.gas_low' AND tenant_id = ?").bind(m.tenantId).first<{ n: number }>();
    expect(gasLow?.n).toBe(0);

    expect((await m.dashboard(`/v1/wallets/${created.body.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await m.dashboard(`/v1/wallets/${created.body.id}`)).status).toBe(404);
    expect((await m.dashboard("/v1/wallets", { json: body })).status).toBe(201);
  });

  test("the operator installs signers on workerd: an EVM key and a TON v5r1 seed (WebCrypto Ed25519) that derive their address; another key: 400; never echoed", async () => {
    const m = await signUpMerchant(stack, "Signers");
    const operator = { "x-operator-key": "svc_operator_dev" };
    const install = (body: Record<string, string>) => stack.fetch(`/v1/operator/tenants/${m.tenantId}/signers`, { json: body, headers: operator });

    const evmKey = generatePrivateKey();
    const evm = privateKeyToAccount(evmKey);
    const evmInstalled = await install({ chain: "BASE", address: evm.address, privateKey: evmKey });
    expect(evmInstalled.status).toBe(201);
    expect(evmInstalled.body).toEqual({ id: expect.any(String), chain: "BASE", address: evm.address });
    const wrongEvm = await install({ chain: "BASE", address: evm.address, privateKey: generatePrivateKey() });
    expect(wrongEvm.status).toBe(400);
    expect(JSON.stringify(wrongEvm.body.message)).toContain("does not derive address");

    const seed = Buffer.from(crypto.getRandomValues(new Uint8Array(32)));
    const keys = keyPairFromSeed(seed);
    const ton = WalletContractV5R1.create({ publicKey: keys.publicKey, walletId: { networkGlobalId: -239 } }).address.toString({ bounceable: false });
    const tonInstalled = await install({ chain: "TON", address: ton, privateKey: seed.toString("hex") });
    expect(tonInstalled.status).toBe(201);
    expect(tonInstalled.body).toMatchObject({ chain: "TON", address: expect.stringMatching(/^0:[0-9a-f]{64}$/) });
    const bySecret = await install({ chain: "TON", address: ton, privateKey: keys.secretKey.toString("base64") });
    expect(bySecret.body.id).toBe(tonInstalled.body.id);
    const stranger = Buffer.from(crypto.getRandomValues(new Uint8Array(32)));
    expect((await install({ chain: "TON", address: ton, privateKey: stranger.toString("hex") })).status).toBe(400);

    const secrets = [evmKey.slice(2), seed.toString("hex"), keys.secretKey.toString("base64")];
    const db = await stack.db();
    const stored = JSON.stringify(await db.prepare("SELECT * FROM signers WHERE tenant_id = ?").bind(m.tenantId).all());
    const audit = JSON.stringify((await m.dashboard("/v1/go-live")).body);
    for (const secret of secrets) {
      for (const seen of [stored, audit, JSON.stringify([evmInstalled.body, tonInstalled.body, bySecret.body])]) expect(seen).not.toContain(secret);
    }
    expect(audit).toContain("SIGNER_INSTALLED");
  });

  test("a TON wallet proves control with a TON Connect signData text signature on workerd; another key's signature: 400", async () => {
    const m = await signUpMerchant(stack, "TON wallets");
    const wallet = testTonWallet("v5r1");
    const created = await m.dashboard("/v1/wallets", { json: { chain: "TON", role: "COLLECTIONS", address: wallet.address } });
    expect(created.status).toBe(201);
    const challenge = await m.dashboard(`/v1/wallets/${created.body.id}/challenge`, { method: "POST" });
    expect(challenge.status).toBe(201);
    // TON Connect's domain must be the widget host (EMBED_HOST, unset in this stack) or a widget program's allowed origin.
    const me = (await m.dashboard("/v1/me")).body;
    const program = me.widgetPrograms[0];
    const allowed = { name: program.name, merchantConfigId: program.merchantConfigId, allowedOrigins: ["https://shop.ton-merchant.example"] };
    expect((await m.dashboard(`/v1/widget-programs/${program.id}`, { method: "PUT", json: allowed })).status).toBe(200);
    const domain = "shop.ton-merchant.example";
    const timestamp = Math.floor(Date.now() / 1000);
    const forged = await testTonWallet("v5r1").signData({ text: challenge.body.message, domain, timestamp });
    const refused = await m.dashboard(`/v1/wallets/${created.body.id}/verify`, {
      json: { challengeId: challenge.body.id, ...forged, publicKey: forged.publicKey },
    });
    expect(refused.status).toBe(400);
    const again = await m.dashboard(`/v1/wallets/${created.body.id}/challenge`, { method: "POST" });
    const signed = await wallet.signData({ text: again.body.message, domain, timestamp });
    const verified = await m.dashboard(`/v1/wallets/${created.body.id}/verify`, { json: { challengeId: again.body.id, ...signed } });
    expect(verified.status).toBe(200);
    expect(verified.body.controlVerified).toBe(true);
  });
});
