import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import {
  decodeEventLog,
  encodeAbiParameters,
  encodeEventTopics,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  keccak256,
  serializeTransaction,
  zeroAddress,
  type Address,
  type Hex,
} from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { fixedClock } from "../../domain/clock.ts";
import type { Chain } from "../../domain/rails.ts";
import { CHAIN_CONFIG, SIMULATED_OPERATOR } from "../chain-config.ts";
import type { ChainTransaction, EvmLog } from "../chain-port.ts";
import { SVC_POOL_ABI } from "../evm/svc-pool-abi.ts";
import { loanIdToBytes32 } from "../loan-id.ts";
import { SIM_FAUCET_MINTER, SIM_POOL_GENESIS_BALANCE, SimChainEngine } from "./sim-chain-engine.ts";
import { SimChainRejected } from "./sim-chain-rejected.ts";
import { memorySimStorage } from "./sim-storage.ts";

const CHAIN: Chain = "POLYGON_AMOY";
const CHAIN_ID = CHAIN_CONFIG.POLYGON_AMOY.chainId!;
const TOKEN = getAddress(CHAIN_CONFIG.POLYGON_AMOY.token.address);
const POOL = getAddress(CHAIN_CONFIG.POLYGON_AMOY.pool!);
const OPERATOR = getAddress(SIMULATED_OPERATOR);
const LOAN_ID = "5b0e1c0a-6f7d-4c1e-9a3b-2f1d0c9e8a7b";
const START = new Date("2026-11-21T10:00:00.000Z");

const approveData = (spender: Address, amount: bigint) => encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [spender, amount] });
const transferData = (to: Address, amount: bigint) => encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [to, amount] });
const repayData = (amount: bigint, loanId = LOAN_ID, collections: Address = POOL) =>
  encodeFunctionData({ abi: SVC_POOL_ABI, functionName: "repay", args: [loanIdToBytes32(loanId), collections, amount] });

type TxFields = { to?: Address | null; data?: Hex; nonce?: number; chainId?: number; value?: bigint };

let clock: ReturnType<typeof fixedClock>;
let chain: SimChainEngine;
let borrower: PrivateKeyAccount;

beforeEach(() => {
  clock = fixedClock(START);
  chain = new SimChainEngine(CHAIN, memorySimStorage(), clock);
  borrower = privateKeyToAccount(generatePrivateKey());
});

/** Signs as a wallet would, with the sender's next nonce unless given. */
async function sign(account: PrivateKeyAccount, fields: TxFields): Promise<Hex> {
  return account.signTransaction({
    chainId: fields.chainId ?? CHAIN_ID,
    nonce: fields.nonce ?? (await chain.nonceOf(account.address)),
    to: fields.to === undefined ? TOKEN : fields.to,
    data: fields.data,
    value: fields.value,
    gas: 100_000n,
    maxFeePerGas: 1n,
    maxPriorityFeePerGas: 1n,
    type: "eip1559",
  });
}

async function send(account: PrivateKeyAccount, fields: TxFields) {
  return chain.submitEvmTransaction({ serializedTransaction: await sign(account, fields) });
}

async function txAt(blockNumber: number): Promise<ChainTransaction & { family: "EVM" }> {
  const { transactions } = await chain.readTransactions(blockNumber - 1, 1);
  const tx = transactions[0];
  if (tx?.family !== "EVM") throw new Error(`no EVM transaction in block ${blockNumber}`);
  return tx;
}

const decodeToken = (log: EvmLog) => decodeEventLog({ abi: erc20Abi, topics: log.topics as [Hex, ...Hex[]], data: log.data as Hex });
const decodePool = (log: EvmLog) => decodeEventLog({ abi: SVC_POOL_ABI, topics: log.topics as [Hex, ...Hex[]], data: log.data as Hex });

async function expectRejected(promise: Promise<unknown>, reason: RegExp) {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SimChainRejected);
  expect((error as Error).message).toMatch(reason);
}

describe("faucet", () => {
  test("mints to the address in its own block, with a Transfer from 0x0 by the token contract", async () => {
    const minted = await chain.faucet({ address: borrower.address, amount: 250_000_000n, sandboxTenantId: "tenant-1" });
    expect(minted.blockNumber).toBe(1);
    expect(await chain.balanceOf(borrower.address)).toBe(250_000_000n);
    expect(await chain.head()).toBe(1);

    const tx = await txAt(1);
    expect(tx).toMatchObject({ hash: minted.txHash, from: SIM_FAUCET_MINTER, to: TOKEN, status: "success", sandboxTenantId: "tenant-1" });
    expect(tx.logs).toHaveLength(1);
    expect(tx.logs[0]!.address).toBe(TOKEN);
    expect(decodeToken(tx.logs[0]!)).toEqual({ eventName: "Transfer", args: { from: zeroAddress, to: borrower.address, value: 250_000_000n } });
  });

  test("accepts a lowercase address and keeps one balance per account", async () => {
    await chain.faucet({ address: borrower.address.toLowerCase(), amount: 1n });
    await chain.faucet({ address: borrower.address, amount: 2n });
    expect(await chain.balanceOf(borrower.address.toLowerCase())).toBe(3n);
  });

  test("rejects bad addresses, amounts and foreign tokens, writing nothing", async () => {
    await expectRejected(chain.faucet({ address: "0x1234", amount: 1n }), /address must be/);
    // vitalik.eth's address with one letter's case flipped: a broken EIP-55 checksum.
    await expectRejected(chain.faucet({ address: "0xD8dA6BF26964aF9D7eEd9e03E53415D37aA96045", amount: 1n }), /checksum/);
    await expectRejected(chain.faucet({ address: borrower.address, amount: 0n }), /positive/);
    await expectRejected(chain.faucet({ address: borrower.address, amount: -5n }), /positive/);
    await expectRejected(chain.faucet({ address: borrower.address, amount: 5 as unknown as bigint }), /positive/);
    await expectRejected(chain.faucet({ address: borrower.address, amount: 1n, token: POOL }), /only the stablecoin/);
    expect(await chain.head()).toBe(0);
  });
});

describe("approve then repay", () => {
  test("moves the tokens to the pool, spends the allowance and emits Transfer and Repaid", async () => {
    await chain.faucet({ address: borrower.address, amount: 500_000_000n });
    const approved = await send(borrower, { to: TOKEN, data: approveData(POOL, 300_000_000n) });
    expect(approved.status).toBe("success");
    expect(approved.from).toBe(borrower.address);
    expect(await chain.allowance(borrower.address, POOL)).toBe(300_000_000n);

    const serialized = await sign(borrower, { to: POOL, data: repayData(120_000_000n) });
    const repaid = await chain.submitEvmTransaction({ serializedTransaction: serialized, sandboxTenantId: "tenant-1" });
    expect(repaid).toEqual({ txHash: keccak256(serialized), status: "success", blockNumber: 3, from: borrower.address, revertReason: null });

    expect(await chain.balanceOf(borrower.address)).toBe(380_000_000n);
    expect(await chain.balanceOf(POOL)).toBe(SIM_POOL_GENESIS_BALANCE + 120_000_000n);
    expect(await chain.allowance(borrower.address, POOL)).toBe(180_000_000n);
    expect(await chain.nonceOf(borrower.address)).toBe(2);

    const approveTx = await txAt(2);
    expect(approveTx.logs.map((l) => l.address)).toEqual([TOKEN]);
    expect(decodeToken(approveTx.logs[0]!)).toEqual({ eventName: "Approval", args: { owner: borrower.address, spender: POOL, value: 300_000_000n } });

    const repayTx = await txAt(3);
    expect(repayTx).toMatchObject({
      hash: repaid.txHash,
      from: borrower.address,
      to: POOL,
      input: repayData(120_000_000n),
      status: "success",
      sandboxTenantId: "tenant-1",
    });
    expect(repayTx.logs.map((l) => [l.address, l.logIndex])).toEqual([
      [TOKEN, 0],
      [POOL, 1],
    ]);
    expect(decodeToken(repayTx.logs[0]!)).toEqual({ eventName: "Transfer", args: { from: borrower.address, to: POOL, value: 120_000_000n } });
    expect(decodePool(repayTx.logs[1]!)).toEqual({
      eventName: "Repaid",
      args: { loanId: loanIdToBytes32(LOAN_ID), payer: borrower.address, collections: POOL, amount: 120_000_000n },
    });
  });

  test("the pool's log is bit for bit what viem encodes for Repaid", async () => {
    await chain.faucet({ address: borrower.address, amount: 10n });
    await send(borrower, { data: approveData(POOL, 10n) });
    await send(borrower, { to: POOL, data: repayData(10n) });
    const log = (await txAt(3)).logs[1]!;
    expect(log.topics).toEqual(
      encodeEventTopics({
        abi: SVC_POOL_ABI,
        eventName: "Repaid",
        args: { loanId: loanIdToBytes32(LOAN_ID), payer: borrower.address, collections: POOL },
      }) as string[],
    );
    expect(log.data).toBe(encodeAbiParameters([{ type: "uint256" }], [10n]));
  });

  test("without an allowance: reverted, nothing moves, no logs, the nonce is consumed", async () => {
    await chain.faucet({ address: borrower.address, amount: 500_000_000n });
    const result = await send(borrower, { to: POOL, data: repayData(100_000_000n) });
    expect(result.status).toBe("reverted");
    expect(result.revertReason).toBe("ERC20: transfer amount exceeds allowance");
    expect(await chain.balanceOf(borrower.address)).toBe(500_000_000n);
    expect(await chain.balanceOf(POOL)).toBe(SIM_POOL_GENESIS_BALANCE);
    expect(await chain.nonceOf(borrower.address)).toBe(1);
    expect(await txAt(result.blockNumber)).toMatchObject({ hash: result.txHash, status: "reverted", logs: [], to: POOL });
  });

  test("with too small an allowance: reverted", async () => {
    await chain.faucet({ address: borrower.address, amount: 500n });
    await send(borrower, { data: approveData(POOL, 99n) });
    expect((await send(borrower, { to: POOL, data: repayData(100n) })).status).toBe("reverted");
    expect(await chain.allowance(borrower.address, POOL)).toBe(99n);
  });

  test("without the balance: reverted, and the allowance is not spent", async () => {
    await chain.faucet({ address: borrower.address, amount: 50n });
    await send(borrower, { data: approveData(POOL, 100n) });
    const result = await send(borrower, { to: POOL, data: repayData(100n) });
    expect(result).toMatchObject({ status: "reverted", revertReason: "ERC20: transfer amount exceeds balance" });
    expect(await chain.allowance(borrower.address, POOL)).toBe(100n);
    expect(await chain.balanceOf(borrower.address)).toBe(50n);
    expect((await txAt(result.blockNumber)).logs).toEqual([]);
  });

  test("with no tokens at all: reverted", async () => {
    await send(borrower, { data: approveData(POOL, 100n) });
    expect((await send(borrower, { to: POOL, data: repayData(100n) })).status).toBe("reverted");
  });

  test("of zero: reverted by the pool (ZeroAmount)", async () => {
    await send(borrower, { data: approveData(POOL, 100n) });
    expect(await send(borrower, { to: POOL, data: repayData(0n) })).toMatchObject({ status: "reverted", revertReason: "ZeroAmount()" });
  });

  test("an allowance given to someone else does not let the pool pull", async () => {
    const other = privateKeyToAccount(generatePrivateKey());
    await chain.faucet({ address: borrower.address, amount: 100n });
    await send(borrower, { data: approveData(other.address, 100n) });
    expect((await send(borrower, { to: POOL, data: repayData(100n) })).status).toBe("reverted");
  });

  test("approve replaces the allowance (it does not add)", async () => {
    await send(borrower, { data: approveData(POOL, 100n) });
    await send(borrower, { data: approveData(POOL, 30n) });
    expect(await chain.allowance(borrower.address, POOL)).toBe(30n);
  });
});

describe("other token calls", () => {
  test("transfer moves tokens with a Transfer log; uncovered, it reverts", async () => {
    const friend = privateKeyToAccount(generatePrivateKey());
    await chain.faucet({ address: borrower.address, amount: 100n });
    const ok = await send(borrower, { data: transferData(friend.address, 40n) });
    expect(ok.status).toBe("success");
    expect(await chain.balanceOf(friend.address)).toBe(40n);
    expect(decodeToken((await txAt(ok.blockNumber)).logs[0]!)).toEqual({
      eventName: "Transfer",
      args: { from: borrower.address, to: friend.address, value: 40n },
    });

    const uncovered = await send(borrower, { data: transferData(friend.address, 61n) });
    expect(uncovered).toMatchObject({ status: "reverted", revertReason: "ERC20: transfer amount exceeds balance" });
    expect(await chain.balanceOf(borrower.address)).toBe(60n);
  });

  test("a transfer to oneself leaves the balance as it was", async () => {
    await chain.faucet({ address: borrower.address, amount: 100n });
    expect((await send(borrower, { data: transferData(borrower.address, 100n) })).status).toBe("success");
    expect(await chain.balanceOf(borrower.address)).toBe(100n);
  });

  test("transfers to the zero address and approvals of it revert", async () => {
    await chain.faucet({ address: borrower.address, amount: 100n });
    expect((await send(borrower, { data: transferData(zeroAddress, 1n) })).revertReason).toBe("ERC20: transfer to the zero address");
    expect((await send(borrower, { data: approveData(zeroAddress, 1n) })).revertReason).toBe("ERC20: approve to the zero address");
  });

  test("transferFrom spends the caller's allowance", async () => {
    const spender = privateKeyToAccount(generatePrivateKey());
    const receiver = privateKeyToAccount(generatePrivateKey());
    await chain.faucet({ address: borrower.address, amount: 100n });
    await send(borrower, { data: approveData(spender.address, 70n) });
    const data = encodeFunctionData({ abi: erc20Abi, functionName: "transferFrom", args: [borrower.address, receiver.address, 50n] });
    expect((await send(spender, { data })).status).toBe("success");
    expect(await chain.balanceOf(receiver.address)).toBe(50n);
    expect(await chain.allowance(borrower.address, spender.address)).toBe(20n);
    expect((await send(spender, { data })).revertReason).toBe("ERC20: transfer amount exceeds allowance");
  });

  test("a view called in a transaction succeeds and changes nothing", async () => {
    const data = encodeFunctionData({ abi: erc20Abi, functionName: "balanceOf", args: [borrower.address] });
    expect(await send(borrower, { data })).toMatchObject({ status: "success" });
    expect((await txAt(1)).logs).toEqual([]);
  });

  test("calldata no function matches reverts, on the token and on the pool", async () => {
    expect((await send(borrower, { to: TOKEN, data: "0xdeadbeef" })).revertReason).toBe("no function matches the calldata");
    expect((await send(borrower, { to: POOL, data: "0xdeadbeef" })).status).toBe("reverted");
    expect((await send(borrower, { to: POOL })).status).toBe("reverted");
    expect((await send(borrower, { to: TOKEN, data: approveData(POOL, 1n).slice(0, 40) as Hex })).status).toBe("reverted");
  });

  test("the pool's fund and collect revert for anyone but the operator", async () => {
    const fund = encodeFunctionData({ abi: SVC_POOL_ABI, functionName: "fund", args: [loanIdToBytes32(LOAN_ID), borrower.address, 1n] });
    const collect = encodeFunctionData({ abi: SVC_POOL_ABI, functionName: "collect", args: [borrower.address, 1n] });
    expect((await send(borrower, { to: POOL, data: fund })).revertReason).toBe("NotOperator()");
    expect((await send(borrower, { to: POOL, data: collect })).revertReason).toBe("NotOperator()");
    expect(await chain.balanceOf(borrower.address)).toBe(0n);
  });

  test("collect and fund signed with Anvil's published account #1 (the former operator) revert, and the pool keeps its tokens", async () => {
    const anvil1 = privateKeyToAccount("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d");
    expect(anvil1.address).toBe(getAddress("0x70997970C51812dc3A010C7d01b50e0d17dc79C8"));
    expect(OPERATOR).not.toBe(anvil1.address);
    const collect = encodeFunctionData({ abi: SVC_POOL_ABI, functionName: "collect", args: [anvil1.address, 1_000_000n] });
    const fund = encodeFunctionData({ abi: SVC_POOL_ABI, functionName: "fund", args: [loanIdToBytes32(LOAN_ID), anvil1.address, 1_000_000n] });
    expect(await send(anvil1, { to: POOL, data: collect })).toMatchObject({ status: "reverted", revertReason: "NotOperator()" });
    expect(await send(anvil1, { to: POOL, data: fund })).toMatchObject({ status: "reverted", revertReason: "NotOperator()" });
    expect(await chain.balanceOf(POOL)).toBe(SIM_POOL_GENESIS_BALANCE);
    expect(await chain.balanceOf(anvil1.address)).toBe(0n);
  });

  test("the operator is an address no key is known for: the engine runs the pool's fund as it, nothing signed comes from it", () => {
    // A low address like the faucet minter's: not derived from any private key.
    expect(OPERATOR).toBe(getAddress("0x00000000000000000000000000000000000f00d5"));
  });

  test("a call to an account without code succeeds and does nothing; contract creation reverts", async () => {
    const eoa = privateKeyToAccount(generatePrivateKey()).address;
    expect(await send(borrower, { to: eoa, data: repayData(1n) })).toMatchObject({ status: "success" });
    expect((await txAt(1)).logs).toEqual([]);
    expect(await send(borrower, { to: null, data: "0x6000" })).toMatchObject({ status: "reverted", revertReason: "contract creation is not simulated" });
    expect(await txAt(2)).toMatchObject({ to: null });
  });
});

describe("rejected before inclusion (the API answers 400)", () => {
  // Rejections write nothing: no block, no nonce.
  afterEach(async () => {
    expect(await chain.head()).toBe(0);
    expect(await chain.nonceOf(borrower.address)).toBe(0);
  });

  test("garbage, non-hex and empty input", async () => {
    await expectRejected(chain.submitEvmTransaction({ serializedTransaction: "0x02deadbeef" }), /cannot be parsed/);
    await expectRejected(chain.submitEvmTransaction({ serializedTransaction: "0xzz" }), /hex string/);
    await expectRejected(chain.submitEvmTransaction({ serializedTransaction: "hello" }), /hex string/);
    await expectRejected(chain.submitEvmTransaction({ serializedTransaction: "0x" }), /hex string/);
    await expectRejected(chain.submitEvmTransaction({ serializedTransaction: 42 as unknown as string }), /hex string/);
  });

  test("an unsigned transaction", async () => {
    const unsigned = serializeTransaction({
      chainId: CHAIN_ID,
      nonce: 0,
      to: TOKEN,
      data: approveData(POOL, 1n),
      gas: 100_000n,
      maxFeePerGas: 1n,
      maxPriorityFeePerGas: 1n,
      type: "eip1559",
    });
    await expectRejected(chain.submitEvmTransaction({ serializedTransaction: unsigned }), /not signed/);
  });

  test("a transaction for another chain id", async () => {
    await expectRejected(send(borrower, { chainId: CHAIN_CONFIG.BASE_SEPOLIA.chainId!, data: approveData(POOL, 1n) }), /chain id 84532, not 80002/);
  });

  test("a legacy transaction without EIP-155 chain id", async () => {
    const serializedTransaction = await borrower.signTransaction({
      nonce: 0,
      to: TOKEN,
      data: approveData(POOL, 1n),
      gas: 100_000n,
      gasPrice: 1n,
      type: "legacy",
    });
    await expectRejected(chain.submitEvmTransaction({ serializedTransaction }), /no chain id/);
  });

  test("a nonce ahead of the sender's next", async () => {
    const error = await send(borrower, { nonce: 1, data: approveData(POOL, 1n) }).catch((e: Error) => e);
    expect(error).toBeInstanceOf(SimChainRejected);
    // The sender's next nonce (0) is not disclosed; the message names only the transaction's own.
    expect((error as Error).message).toBe(`wrong nonce: 1 is not the next nonce of ${borrower.address}`);
  });

  test("a transaction that sends native value", async () => {
    await expectRejected(send(borrower, { value: 1n, data: approveData(POOL, 1n) }), /value must be 0/);
  });
});

describe("requireFundedSender (the sandbox helpers' rule)", () => {
  test("a sender that never held the stablecoin here and never sent is refused, writing nothing; once funded it is included", async () => {
    const submit = async () =>
      chain.submitEvmTransaction({ serializedTransaction: await sign(borrower, { data: approveData(POOL, 1n) }), requireFundedSender: true });
    await expectRejected(submit(), new RegExp(`^${borrower.address} has never held USDC on this ledger`));
    expect(await chain.head()).toBe(0);
    expect(await chain.nonceOf(borrower.address)).toBe(0);
    await chain.faucet({ address: borrower.address, amount: 1n });
    expect(await submit()).toMatchObject({ status: "success" });
  });
});

describe("nonces", () => {
  test("a used nonce is rejected (a different transaction with it)", async () => {
    await send(borrower, { data: approveData(POOL, 1n) });
    const error = await send(borrower, { nonce: 0, data: approveData(POOL, 2n) }).catch((e: Error) => e);
    expect((error as Error).message).toBe(`wrong nonce: 0 is not the next nonce of ${borrower.address}`);
    expect((error as Error).message).not.toMatch(/\b1\b/);
    expect(await chain.head()).toBe(1);
    expect(await chain.allowance(borrower.address, POOL)).toBe(1n);
  });

  test("the same signed transaction sent twice is included once and answers the same", async () => {
    const serializedTransaction = await sign(borrower, { data: approveData(POOL, 5n) });
    const first = await chain.submitEvmTransaction({ serializedTransaction });
    const again = await chain.submitEvmTransaction({ serializedTransaction });
    expect(again).toEqual(first);
    expect(await chain.head()).toBe(1);
    expect(await chain.nonceOf(borrower.address)).toBe(1);
  });

  test("nonces are per sender, and a reverted transaction consumes one", async () => {
    const other = privateKeyToAccount(generatePrivateKey());
    await send(borrower, { to: POOL, data: repayData(1n) });
    await send(other, { data: approveData(POOL, 1n) });
    expect(await chain.nonceOf(borrower.address)).toBe(1);
    expect(await chain.nonceOf(other.address)).toBe(1);
  });

  test("concurrent submissions in nonce order are all included, in order", async () => {
    await chain.faucet({ address: borrower.address, amount: 100n });
    const signed = await Promise.all([0, 1, 2].map((nonce) => sign(borrower, { nonce, data: transferData(POOL, 10n) })));
    const results = await Promise.all(signed.map((serializedTransaction) => chain.submitEvmTransaction({ serializedTransaction })));
    expect(results.map((r) => [r.status, r.blockNumber])).toEqual([
      ["success", 2],
      ["success", 3],
      ["success", 4],
    ]);
    expect(await chain.balanceOf(borrower.address)).toBe(70n);
  });

  test("legacy (EIP-155) and EIP-2930 transactions are accepted", async () => {
    const legacy = await borrower.signTransaction({
      chainId: CHAIN_ID,
      nonce: 0,
      to: TOKEN,
      data: approveData(POOL, 1n),
      gas: 100_000n,
      gasPrice: 1n,
      type: "legacy",
    });
    const eip2930 = await borrower.signTransaction({
      chainId: CHAIN_ID,
      nonce: 1,
      to: TOKEN,
      data: approveData(POOL, 2n),
      gas: 100_000n,
      gasPrice: 1n,
      type: "eip2930",
    });
    expect((await chain.submitEvmTransaction({ serializedTransaction: legacy })).status).toBe("success");
    expect((await chain.submitEvmTransaction({ serializedTransaction: eip2930 })).status).toBe("success");
    expect(await chain.allowance(borrower.address, POOL)).toBe(2n);
  });
});

describe("the impostor contract", () => {
  test("includes a successful transaction whose Repaid log comes from another contract", async () => {
    const impostor = getAddress("0x000000000000000000000000000000000000bad1");
    const topics = encodeEventTopics({
      abi: SVC_POOL_ABI,
      eventName: "Repaid",
      args: { loanId: loanIdToBytes32(LOAN_ID), payer: borrower.address, collections: POOL },
    }) as Hex[];
    const data = encodeAbiParameters([{ type: "uint256" }], [1_000_000n]);
    const emitted = await chain.emitLogAs({ address: impostor, topics, data, from: borrower.address, sandboxTenantId: "tenant-1" });
    const tx = await txAt(emitted.blockNumber);
    expect(tx).toMatchObject({ hash: emitted.txHash, from: borrower.address, to: impostor, status: "success", sandboxTenantId: "tenant-1" });
    expect(tx.logs).toEqual([{ address: impostor, topics, data, logIndex: 0 }]);
    expect(decodePool(tx.logs[0]!).eventName).toBe("Repaid");
    expect(await chain.balanceOf(POOL)).toBe(SIM_POOL_GENESIS_BALANCE);
    expect(await chain.nonceOf(borrower.address)).toBe(1);
  });

  test("cannot speak for the pool or the token, and checks its topics and data", async () => {
    const topic = keccak256("0x01");
    await expectRejected(chain.emitLogAs({ address: POOL, topics: [topic], data: "0x", from: borrower.address }), /its own code/);
    await expectRejected(chain.emitLogAs({ address: TOKEN.toLowerCase(), topics: [topic], data: "0x", from: borrower.address }), /its own code/);
    const other = getAddress("0x000000000000000000000000000000000000bad1");
    await expectRejected(chain.emitLogAs({ address: other, topics: [topic, topic, topic, topic, topic], data: "0x", from: borrower.address }), /at most 4/);
    await expectRejected(chain.emitLogAs({ address: other, topics: ["0x1234"], data: "0x", from: borrower.address }), /32 bytes/);
    await expectRejected(chain.emitLogAs({ address: other, topics: [], data: "0x123", from: borrower.address }), /whole bytes/);
    await expectRejected(chain.emitLogAs({ address: other, topics: [], data: "0x", from: "nobody" }), /from must be/);
    expect(await chain.head()).toBe(0);
  });
});

describe("funding from the pool", () => {
  test("executes the pool's fund from the operator: Transfer(pool → borrower) and Funded", async () => {
    const funded = await chain.fundFromPool({ loanId: LOAN_ID, to: borrower.address, amount: 75_000_000n, reference: `funding:${LOAN_ID}` });
    expect(funded).toMatchObject({ status: "success", blockNumber: 1, timestamp: Math.floor(START.getTime() / 1000), failureReason: null });
    expect(await chain.balanceOf(borrower.address)).toBe(75_000_000n);
    expect(await chain.balanceOf(POOL)).toBe(SIM_POOL_GENESIS_BALANCE - 75_000_000n);
    expect(await chain.nonceOf(OPERATOR)).toBe(1);

    const tx = await txAt(1);
    expect(tx).toMatchObject({ hash: funded.txHash, from: OPERATOR, to: POOL, status: "success", sandboxTenantId: null });
    expect(tx.input).toBe(encodeFunctionData({ abi: SVC_POOL_ABI, functionName: "fund", args: [loanIdToBytes32(LOAN_ID), borrower.address, 75_000_000n] }));
    expect(decodeToken(tx.logs[0]!)).toEqual({ eventName: "Transfer", args: { from: POOL, to: borrower.address, value: 75_000_000n } });
    expect(decodePool(tx.logs[1]!)).toEqual({
      eventName: "Funded",
      args: { loanId: loanIdToBytes32(LOAN_ID), borrower: borrower.address, amount: 75_000_000n },
    });
  });

  test("is idempotent by reference: the same reference answers the first result and moves nothing", async () => {
    const input = { loanId: LOAN_ID, to: borrower.address, amount: 75_000_000n, reference: `funding:${LOAN_ID}` };
    const first = await chain.fundFromPool(input);
    clock.advance(60_000);
    expect(await chain.fundFromPool(input)).toEqual(first);
    expect(await chain.fundFromPool({ ...input, amount: 1n })).toEqual(first);
    expect(await chain.balanceOf(borrower.address)).toBe(75_000_000n);
    expect(await chain.head()).toBe(1);

    const second = await chain.fundFromPool({ ...input, reference: "funding:other" });
    expect(second.txHash).not.toBe(first.txHash);
    expect(await chain.balanceOf(borrower.address)).toBe(150_000_000n);
  });

  test("more than the pool holds reverts, and a retry after a top-up sends", async () => {
    const input = { loanId: LOAN_ID, to: borrower.address, amount: SIM_POOL_GENESIS_BALANCE + 1n, reference: `funding:${LOAN_ID}` };
    const failed = await chain.fundFromPool(input);
    expect(failed).toMatchObject({ status: "reverted", failureReason: "ERC20: transfer amount exceeds balance" });
    expect(await chain.balanceOf(borrower.address)).toBe(0n);
    await chain.faucet({ address: POOL, amount: 1n });
    const retried = await chain.fundFromPool(input);
    expect(retried.status).toBe("success");
    expect(retried.txHash).not.toBe(failed.txHash);
    expect(await chain.balanceOf(POOL)).toBe(0n);
  });

  test("rejects a loan id that is no UUID and a bad address", async () => {
    await expectRejected(chain.fundFromPool({ loanId: "loan-1", to: borrower.address, amount: 1n, reference: "r" }), /UUID/);
    await expectRejected(chain.fundFromPool({ loanId: LOAN_ID, to: "0xnope", amount: 1n, reference: "r" }), /to must be/);
    await expectRejected(chain.fundFromPool({ loanId: LOAN_ID, to: borrower.address, amount: 1n, reference: "" }), /reference/);
  });

  test("a full cycle conserves tokens: funded, repaid in full, the pool is whole again", async () => {
    await chain.fundFromPool({ loanId: LOAN_ID, to: borrower.address, amount: 100_000_000n, reference: `funding:${LOAN_ID}` });
    await send(borrower, { data: approveData(POOL, 100_000_000n) });
    await send(borrower, { to: POOL, data: repayData(100_000_000n) });
    expect(await chain.balanceOf(POOL)).toBe(SIM_POOL_GENESIS_BALANCE);
    expect(await chain.balanceOf(borrower.address)).toBe(0n);
    expect(await chain.allowance(borrower.address, POOL)).toBe(0n);
  });
});

describe("BASE_SEPOLIA", () => {
  test("is its own chain with its own chain id, token and pool", async () => {
    const base = new SimChainEngine("BASE_SEPOLIA", memorySimStorage(), clock);
    const baseToken = getAddress(CHAIN_CONFIG.BASE_SEPOLIA.token.address);
    const basePool = getAddress(CHAIN_CONFIG.BASE_SEPOLIA.pool!);
    await base.faucet({ address: borrower.address, amount: 10n });
    const sign84532 = (nonce: number, to: Address, data: Hex) =>
      borrower.signTransaction({ chainId: 84532, nonce, to, data, gas: 100_000n, maxFeePerGas: 1n, maxPriorityFeePerGas: 1n, type: "eip1559" });
    expect((await base.submitEvmTransaction({ serializedTransaction: await sign84532(0, baseToken, approveData(basePool, 10n)) })).status).toBe("success");
    const repaid = await base.submitEvmTransaction({ serializedTransaction: await sign84532(1, basePool, repayData(10n, LOAN_ID, basePool)) });
    expect(repaid.status).toBe("success");
    expect(await base.balanceOf(basePool)).toBe(SIM_POOL_GENESIS_BALANCE + 10n);
    // An Amoy-signed transaction is not valid here.
    await expectRejected(base.submitEvmTransaction({ serializedTransaction: await sign(borrower, { data: approveData(POOL, 1n) }) }), /not 84532/);
  });
});
