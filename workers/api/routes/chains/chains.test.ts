import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getAddress } from "viem";
import { CHAIN_CONFIG } from "../../../../shared/chains/chain-config.ts";
import { liveChainSettings } from "../../../../shared/chains/live/live-config.ts";
import { CHAINS } from "../../../../shared/domain/vocabularies.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe("GET /v1/chains", () => {
  test("every chain, without credentials, with DECISIONS' fields as this deployment is configured", async () => {
    const res = await t.request("GET", "/v1/chains");
    expect(res.status).toBe(200);
    expect(res.body.nextCursor).toBeNull();
    expect(res.body.data.map((c: { chain: string }) => c.chain)).toEqual([...CHAINS]);
    const byChain = Object.fromEntries(res.body.data.map((c: { chain: string }) => [c.chain, c]));
    expect(byChain.POLYGON).toEqual({
      chain: "POLYGON",
      family: "EVM",
      chainId: 137,
      live: true,
      simulated: false,
      configured: false,
      confirmations: null,
      stablecoin: "USDC",
      tokenAddress: "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359",
      decimals: 6,
      poolAddress: null,
      settlementWallet: null,
    });
    expect(byChain.BASE).toMatchObject({ chainId: 8453, live: true, stablecoin: "USDC", tokenAddress: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" });
    expect(byChain.TON).toMatchObject({ family: "TON", chainId: null, live: true, stablecoin: "USDT" });
    for (const sandbox of ["POLYGON_AMOY", "BASE_SEPOLIA", "TON_TESTNET", "SOLANA_DEVNET"])
      expect(byChain[sandbox]).toMatchObject({ live: false, simulated: true, configured: true, confirmations: 0 });
  });

  test("a live chain configured with a node shows the deployment's token, pool and confirmations", async () => {
    const configured = liveChainSettings({
      POLYGON_RPC_URL: "http://127.0.0.1:8545",
      POLYGON_TOKEN_ADDRESS: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
      POLYGON_POOL_ADDRESS: "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512",
      POLYGON_CONFIRMATIONS: "3",
    });
    const before = t.deps.liveChains;
    t.deps.liveChains = configured;
    try {
      const res = await t.request("GET", "/v1/chains");
      const byChain = Object.fromEntries(res.body.data.map((c: { chain: string }) => [c.chain, c]));
      expect(byChain.POLYGON).toMatchObject({
        chainId: 137,
        configured: true,
        confirmations: 3,
        tokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
        poolAddress: "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512",
      });
      // Base has no node here: canonical token, no pool, not configured.
      expect(byChain.BASE).toMatchObject({ configured: false, confirmations: null, poolAddress: null });
    } finally {
      t.deps.liveChains = before;
    }
  });

  test("confirmations must be a whole number", () => {
    expect(() => liveChainSettings({ BASE_RPC_URL: "http://127.0.0.1:8546", BASE_CONFIRMATIONS: "-1" })).toThrow(RangeError);
    expect(liveChainSettings({ BASE_RPC_URL: "http://127.0.0.1:8546" }).BASE?.confirmations).toBe(10);
    expect(liveChainSettings({}).BASE).toBeUndefined();
  });

  test("the addresses come from the one chain table, checksummed on EVM", async () => {
    const res = await t.request("GET", "/v1/chains");
    for (const c of res.body.data) {
      const config = CHAIN_CONFIG[c.chain as keyof typeof CHAIN_CONFIG];
      expect(c.tokenAddress).toBe(config.token.address);
      expect(c.poolAddress).toBe(config.pool);
      if (c.family === "EVM") {
        expect(getAddress(c.tokenAddress)).toBe(c.tokenAddress);
        if (c.poolAddress) expect(getAddress(c.poolAddress)).toBe(c.poolAddress);
      } else {
        expect(c.settlementWallet).toBe(config.settlementWallet);
      }
    }
  });

  test("it is in the OpenAPI document as public (security: [])", async () => {
    const doc = (await t.request("GET", "/v1/openapi.json")).body;
    expect(doc.paths["/v1/chains"].get.operationId).toBe("chains.list");
    expect(doc.paths["/v1/chains"].get.security).toEqual([]);
  });
});
