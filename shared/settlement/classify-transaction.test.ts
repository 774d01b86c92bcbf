import { describe, expect, test } from "bun:test";
import { encodeAbiParameters, encodeEventTopics, encodeFunctionData, erc20Abi, getAddress } from "viem";
import type { ChainTransaction, EvmLog } from "../chains/chain-port.ts";
import { CHAIN_CONFIG } from "../chains/chain-config.ts";
import { SVC_POOL_ABI } from "../chains/evm/svc-pool-abi.ts";
import { loanIdToBytes32 } from "../chains/loan-id.ts";
import { classifyTransaction } from "./classify-transaction.ts";

const LOAN = "5b0e1c0a-6f7d-4c1e-9a3b-2f1d0c9e8a7b";
const PAYER = getAddress("0x8ba1f109551bd432803012645ac136ddd64dba72");
const amoy = CHAIN_CONFIG.POLYGON_AMOY;
const POOL = amoy.pool!;
const TOKEN = amoy.token.address;

const repaidLog = (address: string, amount: bigint, logIndex = 1): EvmLog => ({
  address,
  topics: encodeEventTopics({
    abi: SVC_POOL_ABI,
    eventName: "Repaid",
    args: { loanId: loanIdToBytes32(LOAN), payer: PAYER, collections: POOL as `0x${string}` },
  }) as string[],
  data: encodeAbiParameters([{ type: "uint256" }], [amount]),
  logIndex,
});
const transferLog = (address: string, from: string, to: string, value: bigint, logIndex = 0): EvmLog => ({
  address,
  topics: encodeEventTopics({ abi: erc20Abi, eventName: "Transfer", args: { from: from as `0x${string}`, to: to as `0x${string}` } }) as string[],
  data: encodeAbiParameters([{ type: "uint256" }], [value]),
  logIndex,
});
const evmTx = (over: Partial<Extract<ChainTransaction, { family: "EVM" }>>): ChainTransaction => ({
  family: "EVM",
  chain: "POLYGON_AMOY",
  hash: "0xabc",
  blockNumber: 7,
  timestamp: 1_800_000_000,
  from: PAYER,
  to: POOL,
  input: "0x",
  status: "success",
  logs: [transferLog(TOKEN, PAYER, POOL, 102_000_000n), repaidLog(POOL, 102_000_000n)],
  ...over,
});

describe("live EVM: the deployment's pool and token, paying a COLLECTIONS wallet", () => {
  const LIVE_POOL = getAddress("0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512");
  const LIVE_TOKEN = getAddress("0x5FbDB2315678afecb367f032d93F642f64180aa3");
  const COLLECTIONS = getAddress("0x90F79bf6EB2c4f870365E785982E1f101E93b906");
  const config = { ...CHAIN_CONFIG.POLYGON, token: { ...CHAIN_CONFIG.POLYGON.token, address: LIVE_TOKEN }, pool: LIVE_POOL };
  const options = { config, collections: new Set([COLLECTIONS.toLowerCase()]) };
  const repaid = (pool: string, collections: string, amount: bigint, logIndex = 1): EvmLog => ({
    address: pool,
    topics: encodeEventTopics({
      abi: SVC_POOL_ABI,
      eventName: "Repaid",
      args: { loanId: loanIdToBytes32(LOAN), payer: PAYER, collections: collections as `0x${string}` },
    }) as string[],
    data: encodeAbiParameters([{ type: "uint256" }], [amount]),
    logIndex,
  });
  const live = (logs: EvmLog[], over: Partial<Extract<ChainTransaction, { family: "EVM" }>> = {}) => evmTx({ chain: "POLYGON", to: LIVE_POOL, logs, ...over });

  test("our pool's Repaid backed by the token's Transfer from the payer to that COLLECTIONS wallet is a payment to it", () => {
    expect(classifyTransaction(live([transferLog(LIVE_TOKEN, PAYER, COLLECTIONS, 9n), repaid(LIVE_POOL, COLLECTIONS, 9n)]), options)).toEqual([
      expect.objectContaining({ kind: "payment", loanId: LOAN, amount: 9n, to: COLLECTIONS, token: LIVE_TOKEN, logIndex: 1 }),
    ]);
  });
  test("paid elsewhere, backed by another amount or another token, or logged by another pool: nothing names the loan", () => {
    const elsewhere = "0x000000000000000000000000000000000000bEEF";
    expect(classifyTransaction(live([transferLog(LIVE_TOKEN, PAYER, elsewhere, 9n), repaid(LIVE_POOL, elsewhere, 9n)]), options)).toEqual([]);
    expect(
      classifyTransaction(live([transferLog(CHAIN_CONFIG.POLYGON.token.address, PAYER, COLLECTIONS, 9n), repaid(LIVE_POOL, COLLECTIONS, 9n)]), options),
    ).toEqual([]);
    for (const logs of [
      [transferLog(LIVE_TOKEN, PAYER, COLLECTIONS, 8n), repaid(LIVE_POOL, COLLECTIONS, 9n)],
      [transferLog(LIVE_TOKEN, PAYER, COLLECTIONS, 9n), repaid(POOL, COLLECTIONS, 9n)],
    ]) {
      // The token that did reach the COLLECTIONS wallet is money received: a payment naming no loan (unmatched).
      expect(classifyTransaction(live(logs), options)).toEqual([expect.objectContaining({ kind: "payment", loanId: null, to: COLLECTIONS, logIndex: 0 })]);
    }
  });
  test("without the chain's COLLECTIONS wallets nothing counts, not even the pool as a receiver", () => {
    expect(classifyTransaction(live([transferLog(LIVE_TOKEN, PAYER, COLLECTIONS, 9n), repaid(LIVE_POOL, COLLECTIONS, 9n)]), { config })).toEqual([]);
    expect(classifyTransaction(live([transferLog(LIVE_TOKEN, PAYER, LIVE_POOL, 9n), repaid(LIVE_POOL, LIVE_POOL, 9n)]), options)).toEqual([]);
  });
});

describe("EVM", () => {
  test("a Repaid log of our pool backed by the canonical token transfer is a payment for the loan", () => {
    expect(classifyTransaction(evmTx({}))).toEqual([
      expect.objectContaining({ kind: "payment", loanId: LOAN, amount: 102_000_000n, from: PAYER, to: POOL, txHash: "0xabc", logIndex: 1, blockNumber: 7 }),
    ]);
  });
  test("a Repaid log from another contract repays nothing (the token that did move is kept as a payment naming no loan)", () => {
    const impostor = "0x000000000000000000000000000000000000dEaD";
    expect(classifyTransaction(evmTx({ logs: [repaidLog(impostor, 1n)] }))).toEqual([]);
    expect(classifyTransaction(evmTx({ logs: [transferLog(TOKEN, PAYER, POOL, 1n), repaidLog(impostor, 1n)] }))).toEqual([
      expect.objectContaining({ kind: "payment", loanId: null, amount: 1n, logIndex: 0 }),
    ]);
  });
  test("a Repaid log without the token moving (or another token moving) counts for nothing", () => {
    expect(classifyTransaction(evmTx({ logs: [repaidLog(POOL, 5n)] }))).toEqual([]);
    const fakeToken = "0x000000000000000000000000000000000000bEEF";
    expect(classifyTransaction(evmTx({ logs: [transferLog(fakeToken, PAYER, POOL, 5n), repaidLog(POOL, 5n)] }))).toEqual([]);
    expect(classifyTransaction(evmTx({ logs: [transferLog(TOKEN, PAYER, POOL, 4n), repaidLog(POOL, 5n)] }))).toEqual([
      expect.objectContaining({ kind: "payment", loanId: null, amount: 4n }),
    ]);
  });
  test("a plain stablecoin transfer to the pool is money received: a payment naming no loan, never dropped", () => {
    expect(classifyTransaction(evmTx({ to: TOKEN, logs: [transferLog(TOKEN, PAYER, POOL, 7n)] }))).toEqual([
      expect.objectContaining({ kind: "payment", loanId: null, amount: 7n, from: PAYER, to: POOL }),
    ]);
    // Funding out of the pool is not a payment.
    expect(classifyTransaction(evmTx({ logs: [transferLog(TOKEN, POOL, PAYER, 7n)] }))).toEqual([]);
  });
  test("a reverted call of repay is a failed repayment naming the loan; other reverted calls are nothing", () => {
    const input = encodeFunctionData({ abi: SVC_POOL_ABI, functionName: "repay", args: [loanIdToBytes32(LOAN), POOL as `0x${string}`, 9n] });
    expect(classifyTransaction(evmTx({ status: "reverted", logs: [], input }))).toEqual([
      expect.objectContaining({ kind: "failed", loanId: LOAN, amount: 9n }),
    ]);
    expect(classifyTransaction(evmTx({ status: "reverted", logs: [], input: "0xdeadbeef" }))).toEqual([]);
    expect(classifyTransaction(evmTx({ status: "reverted", logs: [], input, to: TOKEN }))).toEqual([]);
  });
  test("a Repaid with a loan id we did not write is a payment with no loan (kept as unmatched)", () => {
    const log = { ...repaidLog(POOL, 1n), topics: [repaidLog(POOL, 1n).topics[0]!, `0x${"11".repeat(32)}`, repaidLog(POOL, 1n).topics[2]!] };
    expect(classifyTransaction(evmTx({ logs: [transferLog(TOKEN, PAYER, POOL, 1n), log] }))).toEqual([
      expect.objectContaining({ kind: "payment", loanId: null }),
    ]);
  });
});

describe("TON", () => {
  const ton = CHAIN_CONFIG.TON_TESTNET;
  const tonTx = (over: Partial<Extract<ChainTransaction, { family: "TON" | "SOLANA" }>>): ChainTransaction => ({
    family: "TON",
    chain: "TON_TESTNET",
    hash: "tonhash",
    blockNumber: 3,
    timestamp: 1_800_000_000,
    from: `0:${"a".repeat(64)}`,
    to: ton.settlementWallet!,
    token: ton.token.address,
    amount: 50_000_000n,
    comment: `svc:repay:${LOAN}`,
    status: "success",
    ...over,
  });
  test("the stablecoin to the settlement wallet with the exact comment is a payment for the loan", () => {
    expect(classifyTransaction(tonTx({}))).toEqual([expect.objectContaining({ kind: "payment", loanId: LOAN, amount: 50_000_000n, logIndex: 0 })]);
  });
  test("a wrong or missing comment is a payment with no loan", () => {
    for (const comment of [null, `svc:repay:${LOAN.toUpperCase()}`, ` svc:repay:${LOAN}`, `svc:repay:${LOAN} `, "thanks"]) {
      expect(classifyTransaction(tonTx({ comment }))).toEqual([expect.objectContaining({ kind: "payment", loanId: null })]);
    }
  });
  test("another jetton, or another recipient, counts for nothing", () => {
    expect(classifyTransaction(tonTx({ token: `0:${"b".repeat(64)}` }))).toEqual([]);
    expect(classifyTransaction(tonTx({ to: `0:${"c".repeat(64)}` }))).toEqual([]);
  });
  test("a failed transfer naming a loan is a failed repayment; without a loan, nothing", () => {
    expect(classifyTransaction(tonTx({ status: "failed" }))).toEqual([expect.objectContaining({ kind: "failed", loanId: LOAN })]);
    expect(classifyTransaction(tonTx({ status: "failed", comment: null }))).toEqual([]);
  });
});
