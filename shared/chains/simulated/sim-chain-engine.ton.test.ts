import { beforeEach, describe, expect, test } from "bun:test";
import { Address } from "@ton/core";
import { fixedClock } from "../../domain/clock.ts";
import { CHAIN_CONFIG } from "../chain-config.ts";
import type { ChainTransaction } from "../chain-port.ts";
import { SIM_POOL_GENESIS_BALANCE, SimChainEngine } from "./sim-chain-engine.ts";
import { SimChainRejected } from "./sim-chain-rejected.ts";
import { memorySimStorage } from "./sim-storage.ts";

const TON = CHAIN_CONFIG.TON_TESTNET;
const USDT = TON.token.address;
const SETTLEMENT = TON.settlementWallet!;
const OTHER_JETTON = `0:${"ab".repeat(32)}`;
const LOAN_ID = "5b0e1c0a-6f7d-4c1e-9a3b-2f1d0c9e8a7b";
const START = new Date("2026-11-21T10:00:00.000Z");

const rawWallet = (byte: number) => `0:${byte.toString(16).padStart(2, "0").repeat(32)}`;
const friendly = (raw: string) => Address.parse(raw).toString({ bounceable: false });

let chain: SimChainEngine;
const borrower = rawWallet(0x11);
const stranger = rawWallet(0x22);

beforeEach(() => {
  chain = new SimChainEngine("TON_TESTNET", memorySimStorage(), fixedClock(START));
});

async function txAt(engine: SimChainEngine, blockNumber: number): Promise<ChainTransaction & { family: "TON" | "SOLANA" }> {
  const tx = (await engine.readTransactions(blockNumber - 1, 1)).transactions[0];
  if (!tx || tx.family === "EVM") throw new Error(`no transfer in block ${blockNumber}`);
  return tx;
}

async function expectRejected(promise: Promise<unknown>, reason: RegExp) {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SimChainRejected);
  expect((error as Error).message).toMatch(reason);
}

describe("TON_TESTNET jetton transfers", () => {
  test("a transfer with its comment moves USDT and is recorded as the listener reads it", async () => {
    await chain.faucet({ address: borrower, amount: 30_000_000n });
    const sent = await chain.transferToken({
      from: borrower,
      to: SETTLEMENT,
      amount: 12_345_678n,
      comment: `svc:repay:${LOAN_ID}`,
      sandboxTenantId: "tenant-1",
    });
    expect(sent).toMatchObject({ status: "success", blockNumber: 2, failureReason: null });
    expect(await chain.balanceOf(borrower)).toBe(17_654_322n);
    expect(await chain.balanceOf(SETTLEMENT)).toBe(SIM_POOL_GENESIS_BALANCE + 12_345_678n);
    expect(await txAt(chain, 2)).toEqual({
      family: "TON",
      chain: "TON_TESTNET",
      hash: sent.txHash,
      blockNumber: 2,
      timestamp: Math.floor(START.getTime() / 1000),
      from: borrower,
      to: SETTLEMENT,
      token: USDT,
      amount: 12_345_678n,
      comment: `svc:repay:${LOAN_ID}`,
      status: "success",
      sandboxTenantId: "tenant-1",
    });
  });

  test("friendly and raw forms of one wallet are one account, recorded in raw form", async () => {
    await chain.faucet({ address: friendly(borrower), amount: 5n });
    expect(await chain.balanceOf(borrower)).toBe(5n);
    const sent = await chain.transferToken({ from: friendly(borrower), to: Address.parse(SETTLEMENT).toString(), amount: 5n, comment: "x" });
    expect(await txAt(chain, sent.blockNumber)).toMatchObject({ from: borrower, to: SETTLEMENT });
  });

  test("a transfer the sender cannot cover is recorded as failed and moves nothing", async () => {
    await chain.faucet({ address: borrower, amount: 10n });
    const sent = await chain.transferToken({ from: borrower, to: SETTLEMENT, amount: 11n, comment: `svc:repay:${LOAN_ID}` });
    expect(sent.status).toBe("failed");
    expect(sent.failureReason).toMatch(/insufficient balance: .* holds 10 units, the transfer needs 11/);
    expect(await chain.balanceOf(borrower)).toBe(10n);
    expect(await chain.balanceOf(SETTLEMENT)).toBe(SIM_POOL_GENESIS_BALANCE);
    expect(await txAt(chain, sent.blockNumber)).toMatchObject({ status: "failed", amount: 11n, comment: `svc:repay:${LOAN_ID}` });
  });

  test("another jetton has its own balances and is recorded with its master", async () => {
    await chain.faucet({ address: borrower, amount: 50n, token: OTHER_JETTON });
    expect(await chain.balanceOf(borrower)).toBe(0n);
    expect(await chain.balanceOf(borrower, OTHER_JETTON)).toBe(50n);
    const sent = await chain.transferToken({ from: borrower, to: SETTLEMENT, amount: 50n, comment: `svc:repay:${LOAN_ID}`, token: OTHER_JETTON });
    expect(sent.status).toBe("success");
    expect(await txAt(chain, sent.blockNumber)).toMatchObject({ token: OTHER_JETTON, to: SETTLEMENT, amount: 50n });
    expect(await chain.balanceOf(SETTLEMENT)).toBe(SIM_POOL_GENESIS_BALANCE);
    expect(await chain.balanceOf(SETTLEMENT, OTHER_JETTON)).toBe(50n);
    // USDT cannot be paid out of another jetton's balance.
    await chain.faucet({ address: borrower, amount: 100n });
    expect((await chain.transferToken({ from: borrower, to: SETTLEMENT, amount: 51n, token: OTHER_JETTON })).status).toBe("failed");
    expect(await chain.balanceOf(borrower)).toBe(100n);
  });

  test("the faucet mints from the jetton master, with no comment", async () => {
    const minted = await chain.faucet({ address: borrower, amount: 7n, sandboxTenantId: "tenant-1" });
    expect(await txAt(chain, minted.blockNumber)).toMatchObject({
      from: USDT,
      to: borrower,
      token: USDT,
      amount: 7n,
      comment: null,
      status: "success",
      sandboxTenantId: "tenant-1",
    });
  });

  test("a missing comment is null; transfers to other wallets are recorded too", async () => {
    await chain.faucet({ address: borrower, amount: 10n });
    const sent = await chain.transferToken({ from: borrower, to: stranger, amount: 10n });
    expect(await txAt(chain, sent.blockNumber)).toMatchObject({ to: stranger, comment: null, sandboxTenantId: null });
    expect(await chain.balanceOf(stranger)).toBe(10n);
  });

  test("rejects malformed input and EVM-only operations, writing nothing", async () => {
    await expectRejected(chain.transferToken({ from: "EQnope", to: SETTLEMENT, amount: 1n }), /^from is not a valid TON address/);
    await expectRejected(chain.transferToken({ from: borrower, to: "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045", amount: 1n }), /^to /);
    await expectRejected(chain.transferToken({ from: borrower, to: SETTLEMENT, amount: 0n }), /positive/);
    await expectRejected(chain.transferToken({ from: borrower, to: SETTLEMENT, amount: 1n, token: "usdt" }), /^token /);
    await expectRejected(chain.transferToken({ from: borrower, to: SETTLEMENT, amount: 1n, comment: 5 as unknown as string }), /comment/);
    await expectRejected(chain.submitEvmTransaction({ serializedTransaction: "0x02" }), /for EVM chains/);
    await expectRejected(chain.emitLogAs({ address: borrower, topics: [], data: "0x", from: borrower }), /for EVM chains/);
    await expectRejected(chain.allowance(borrower, SETTLEMENT), /for EVM chains/);
    await expectRejected(chain.nonceOf(borrower), /for EVM chains/);
    expect(await chain.head()).toBe(0);
  });

  test("the settlement wallet never sends by transfer (only funding moves it), whatever its form", async () => {
    for (const from of [SETTLEMENT, friendly(SETTLEMENT)]) {
      await expectRejected(chain.transferToken({ from, to: stranger, amount: 1n }), /^from .* is the platform's settlement wallet/);
    }
    expect(await chain.balanceOf(SETTLEMENT)).toBe(SIM_POOL_GENESIS_BALANCE);
    expect(await chain.balanceOf(stranger)).toBe(0n);
    expect(await chain.head()).toBe(0);
  });

  test("requireFundedSender: a wallet that never held the token here is refused; one spent down to 0 is included as failed", async () => {
    await expectRejected(
      chain.transferToken({ from: stranger, to: borrower, amount: 1n, requireFundedSender: true }),
      /^from .* has never held this token on this ledger/,
    );
    expect(await chain.head()).toBe(0);
    await chain.faucet({ address: borrower, amount: 5n });
    await expectRejected(
      chain.transferToken({ from: borrower, to: stranger, amount: 1n, token: OTHER_JETTON, requireFundedSender: true }),
      /never held this token/,
    );
    await chain.transferToken({ from: borrower, to: stranger, amount: 5n, requireFundedSender: true });
    expect((await chain.transferToken({ from: borrower, to: stranger, amount: 1n, requireFundedSender: true })).status).toBe("failed");
  });

  test("funding pays from the settlement wallet, tagged with the loan, idempotent by reference", async () => {
    const input = { loanId: LOAN_ID, to: friendly(borrower), amount: 40_000_000n, reference: `funding:${LOAN_ID}` };
    const funded = await chain.fundFromPool(input);
    expect(funded).toMatchObject({ status: "success", blockNumber: 1, failureReason: null });
    expect(await chain.fundFromPool(input)).toEqual(funded);
    expect(await chain.balanceOf(borrower)).toBe(40_000_000n);
    expect(await chain.balanceOf(SETTLEMENT)).toBe(SIM_POOL_GENESIS_BALANCE - 40_000_000n);
    expect(await txAt(chain, 1)).toMatchObject({
      from: SETTLEMENT,
      to: borrower,
      token: USDT,
      amount: 40_000_000n,
      comment: `svc:fund:${LOAN_ID}`,
      status: "success",
    });
    expect(await chain.head()).toBe(1);
  });

  test("funding beyond the settlement wallet's balance fails and may be retried", async () => {
    const input = { loanId: LOAN_ID, to: borrower, amount: SIM_POOL_GENESIS_BALANCE + 1n, reference: `funding:${LOAN_ID}` };
    expect((await chain.fundFromPool(input)).status).toBe("failed");
    await chain.faucet({ address: SETTLEMENT, amount: 1n });
    expect((await chain.fundFromPool(input)).status).toBe("success");
  });
});

describe("SOLANA_DEVNET SPL transfers", () => {
  const SOL = CHAIN_CONFIG.SOLANA_DEVNET;
  const payer = "DRpbCBMxVnDK7maPM5tGv6MvB3v1sRMC86PZ8okm21hy";

  test("a transfer with its memo, and a failed one", async () => {
    const solana = new SimChainEngine("SOLANA_DEVNET", memorySimStorage(), fixedClock(START));
    await solana.faucet({ address: payer, amount: 5_000_000n });
    const sent = await solana.transferToken({ from: payer, to: SOL.settlementWallet!, amount: 5_000_000n, comment: `svc:repay:${LOAN_ID}` });
    expect(await txAt(solana, sent.blockNumber)).toMatchObject({
      family: "SOLANA",
      chain: "SOLANA_DEVNET",
      from: payer,
      to: SOL.settlementWallet,
      token: SOL.token.address,
      amount: 5_000_000n,
      comment: `svc:repay:${LOAN_ID}`,
      status: "success",
    });
    expect((await solana.transferToken({ from: payer, to: SOL.settlementWallet!, amount: 1n })).status).toBe("failed");
    await expectRejected(solana.transferToken({ from: "0OIl", to: payer, amount: 1n }), /^from /);
  });
});
