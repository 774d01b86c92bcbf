import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { creditLines } from "../../../../db/schema/credit-lines.ts";
import { loans } from "../../../../db/schema/loans.ts";
import { tenants } from "../../../../db/schema/tenants.ts";
import { bearer, createKey, signUpTenant } from "../../../../shared/testing/fixtures.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import { createEmbedTestApp } from "../../testing/harness.ts";

/**
 * A live chain's pool and token are this deployment's own (POLYGON_POOL_ADDRESS,
 * POLYGON_TOKEN_ADDRESS: the local rehearsal's Anvil contracts, a deployed pool
 * in production), not in CHAIN_CONFIG. A loan must not pay them any more than
 * the canonical addresses: an audit funded a live loan into the pool, where no
 * borrower can repay from and only the operator can move it.
 */

const ORIGIN = "https://shop.example";
const POOL = privateKeyToAccount(generatePrivateKey()).address;
const TOKEN = privateKeyToAccount(generatePrivateKey()).address;
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  t.deps.liveChains.POLYGON = {
    chain: "POLYGON",
    rpcUrl: "http://127.0.0.1:1",
    apiKey: null,
    tokenAddress: TOKEN,
    poolAddress: POOL,
    confirmations: 1,
    startBlock: 0,
  };
});
afterAll(() => t.close());

test("POST /v1/loans and the widget's quote refuse the deployment's pool and token as the borrower's wallet: 400 naming the field, no loan, no credit line", async () => {
  const owner = await signUpTenant(t);
  const { key: sandboxKey } = await createKey(t, owner.token);
  const me = (await t.request("GET", "/v1/me", { headers: { "x-api-key": sandboxKey } })).body;
  await t.db.update(tenants).set({ certifiedAt: new Date(), mode: "live" }).where(eq(tenants.id, owner.tenantId));
  const live = await t.request("POST", "/v1/api-keys", { body: { name: "live", mode: "live" }, headers: bearer(owner.token) });
  expect(live.status).toBe(201);
  const program = await t.request("POST", "/v1/widget-programs", {
    body: { name: "Live checkout", merchantConfigId: me.merchantConfigs[0].id, allowedOrigins: [ORIGIN], mode: "live" },
    headers: bearer(owner.token),
  });
  expect(program.status).toBe(201);
  const e = createEmbedTestApp(t);

  for (const [address, what] of [
    [POOL, "the service's pool contract"],
    [TOKEN.toLowerCase(), "the USDC token contract"],
  ] as const) {
    const created = await t.request("POST", "/v1/loans", {
      body: {
        loanProductId: me.merchantConfigs[0].loanProductId,
        borrowerRef: "customer-1",
        borrowerWalletAddress: address,
        chain: "POLYGON",
        principalAmount: "10.00",
        idempotencyKey: crypto.randomUUID(),
      },
      headers: { "x-api-key": live.body.key },
    });
    expect(created.status).toBe(400);
    expect(created.body).toEqual({
      statusCode: 400,
      message: [`borrowerWalletAddress: must be the borrower's own wallet, not ${what} on POLYGON`],
      error: "Bad Request",
    });
    const quoted = await e.request("POST", `/v1/embed/${program.body.embedKey}/quote`, {
      body: { walletAddress: address, amount: "100.00", tenureDays: 7 },
      headers: { origin: ORIGIN },
    });
    expect(quoted.status).toBe(400);
    expect(quoted.body).toEqual({
      statusCode: 400,
      message: [`walletAddress: must be the borrower's own wallet, not ${what} on POLYGON`],
      error: "Bad Request",
    });
  }
  expect(await t.db.select().from(loans).where(eq(loans.tenantId, owner.tenantId))).toEqual([]);
  expect(await t.db.select().from(creditLines).where(eq(creditLines.programId, program.body.id))).toEqual([]);
});
