import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
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
});
