import { beforeEach, describe, expect, test } from "bun:test";
import { getAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { fixedClock } from "../../domain/clock.ts";
import { CHAIN_CONFIG } from "../chain-config.ts";
import type { ChainPort, TransferRequest } from "../chain-port.ts";
import { SIM_POOL_GENESIS_BALANCE } from "./sim-chain-engine.ts";
import { memorySimulatedChains, type SimulatedChains } from "./sim-chains.ts";
import { simulatedChainPort } from "./simulated-chain-port.ts";

const LOAN_ID = "5b0e1c0a-6f7d-4c1e-9a3b-2f1d0c9e8a7b";
const NOW = new Date("2026-11-21T10:00:00.000Z");
const TON_BORROWER = `0:${"11".repeat(32)}`;
const TENANT = "tenant-1";
const scope = { sandboxTenantId: TENANT };

let chains: SimulatedChains;
let port: ChainPort;
const borrower = privateKeyToAccount(generatePrivateKey()).address;

beforeEach(() => {
  chains = memorySimulatedChains(fixedClock(NOW));
  port = simulatedChainPort(chains);
});

const funding = (overrides: Partial<TransferRequest> = {}): TransferRequest => ({
  chain: "POLYGON_AMOY",
  asset: "USDC",
  from: "sandbox-pool",
  to: borrower,
  amount: 100_000_000n,
  reference: `funding:${LOAN_ID}`,
  now: NOW,
  sandboxTenantId: TENANT,
  ...overrides,
});

describe("transfer (funding)", () => {
  test("EVM: the pool funds the borrower on-chain; a retry with the reference answers the same and moves nothing", async () => {
    const sent = await port.transfer(funding());
    expect(sent).toEqual({ success: true, txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/), blockNumber: 1, confirmedAt: NOW });
    expect(await port.transfer(funding())).toEqual(sent);
    const amoy = chains.chain("POLYGON_AMOY", TENANT);
    expect(await amoy.balanceOf(borrower)).toBe(100_000_000n);
    expect(await amoy.balanceOf(CHAIN_CONFIG.POLYGON_AMOY.pool!)).toBe(SIM_POOL_GENESIS_BALANCE - 100_000_000n);
    const { transactions, head } = await port.readTransactions("POLYGON_AMOY", 0, 10, scope);
    expect(head).toBe(1);
    expect(transactions).toMatchObject([{ family: "EVM", hash: sent.success ? sent.txHash : "", to: getAddress(CHAIN_CONFIG.POLYGON_AMOY.pool!) }]);
  });

  test("TON: the settlement wallet pays the borrower", async () => {
    const sent = await port.transfer(funding({ chain: "TON_TESTNET", asset: "USDT", to: TON_BORROWER, amount: 5_000_000n }));
    expect(sent.success).toBe(true);
    expect(await chains.chain("TON_TESTNET", TENANT).balanceOf(TON_BORROWER)).toBe(5_000_000n);
    const { transactions } = await port.readTransactions("TON_TESTNET", 0, 10, scope);
    expect(transactions).toMatchObject([{ family: "TON", from: CHAIN_CONFIG.TON_TESTNET.settlementWallet, to: TON_BORROWER, amount: 5_000_000n }]);
  });

  test("each chain is its own ledger, and each tenant has its own", async () => {
    await port.transfer(funding());
    await port.transfer(funding({ chain: "BASE_SEPOLIA" }));
    expect((await port.readTransactions("BASE_SEPOLIA", 0, 10, scope)).head).toBe(1);
    expect((await port.readTransactions("POLYGON_AMOY", 0, 10, scope)).head).toBe(1);
    expect((await port.readTransactions("SOLANA_DEVNET", 0, 10, scope)).head).toBe(0);
    // Another tenant's ledger of the same chain saw nothing, and its pool is whole.
    expect((await port.readTransactions("POLYGON_AMOY", 0, 10, { sandboxTenantId: "tenant-2" })).head).toBe(0);
    expect(await chains.chain("POLYGON_AMOY", "tenant-2").balanceOf(borrower)).toBe(0n);
    expect(await chains.chain("POLYGON_AMOY", "tenant-2").balanceOf(CHAIN_CONFIG.POLYGON_AMOY.pool!)).toBe(SIM_POOL_GENESIS_BALANCE);
  });

  test("without a sandbox tenant: a failed transfer and a refused read, never a shared ledger", async () => {
    expect(await port.transfer(funding({ sandboxTenantId: undefined }))).toEqual({
      success: false,
      errorReason: "a transfer on POLYGON_AMOY names the sandbox tenant whose ledger it is on",
      txHash: null,
    });
    expect(() => port.readTransactions("POLYGON_AMOY", 0, 10)).toThrow(RangeError);
  });

  test("failures are values: live chain, wrong asset, reference without a loan, bad address, an uncovered amount", async () => {
    expect(await port.transfer(funding({ chain: "POLYGON" }))).toEqual({ success: false, errorReason: "POLYGON is not a simulated chain", txHash: null });
    expect(await port.transfer(funding({ asset: "USDT" }))).toEqual({ success: false, errorReason: "POLYGON_AMOY carries USDC, not USDT", txHash: null });
    expect(await port.transfer(funding({ reference: "payout-1" }))).toMatchObject({
      success: false,
      errorReason: expect.stringMatching(/funding:<loanId>/),
      txHash: null,
    });
    expect(await port.transfer(funding({ to: "0x12" }))).toMatchObject({ success: false, errorReason: expect.stringMatching(/^to must be/), txHash: null });
    const uncovered = await port.transfer(funding({ amount: SIM_POOL_GENESIS_BALANCE + 1n }));
    expect(uncovered).toMatchObject({ success: false, errorReason: "ERC20: transfer amount exceeds balance", txHash: expect.stringMatching(/^0x/) });
  });
});

describe("readTransactions", () => {
  test("is the chain's, cursor exclusive", async () => {
    const amoy = chains.chain("POLYGON_AMOY", TENANT);
    for (let i = 0; i < 3; i++) await amoy.faucet({ address: borrower, amount: 1n });
    const page = await port.readTransactions("POLYGON_AMOY", 1, 1, scope);
    expect(page.head).toBe(3);
    expect(page.transactions.map((t) => t.blockNumber)).toEqual([2]);
  });

  test("of a live chain throws", () => {
    expect(() => port.readTransactions("BASE", 0, 10, scope)).toThrow("BASE is not a simulated chain");
  });
});

describe("memorySimulatedChains", () => {
  test("hands out one engine per tenant and chain", () => {
    expect(chains.chain("TON_TESTNET", TENANT)).toBe(chains.chain("TON_TESTNET", TENANT));
    expect(chains.chain("TON_TESTNET", TENANT)).not.toBe(chains.chain("SOLANA_DEVNET", TENANT));
    expect(chains.chain("TON_TESTNET", TENANT)).not.toBe(chains.chain("TON_TESTNET", "tenant-2"));
    expect(() => chains.chain("TON", TENANT)).toThrow(RangeError);
    expect(() => chains.chain("TON_TESTNET", "")).toThrow(RangeError);
  });
});
