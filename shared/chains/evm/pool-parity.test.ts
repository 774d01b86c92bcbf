import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { decodeEventLog, encodeFunctionData, erc20Abi, getAddress, zeroAddress, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { fixedClock } from "../../domain/clock.ts";
import { CHAIN_CONFIG } from "../chain-config.ts";
import type { EvmLog } from "../chain-port.ts";
import { loanIdToBytes32 } from "../loan-id.ts";
import { SimChainEngine } from "../simulated/sim-chain-engine.ts";
import { memorySimStorage } from "../simulated/sim-storage.ts";
import { SVC_POOL_ABI } from "./svc-pool-abi.ts";
import { type AnvilNode, deployRehearsalContracts, mintUsdc, type RehearsalDeployment, startAnvil } from "./testing/anvil.ts";

// The simulator re-implements SvcPool.sol in TypeScript (sim-pool.ts) for the
// sandbox; the live chains run the compiled contract. The same repay cases run
// against both, here, and must end the same: success or revert, the balances
// that moved, the logs (by role: token, pool, payer, collections).

const LOAN_ID = "5b0e1c0a-6f7d-4c1e-9a3b-2f1d0c9e8a7b";

type Outcome = { status: "success" | "reverted"; logs: EvmLog[] };

/** One chain that runs the pool: the simulator or Anvil with the compiled contracts. */
type Harness = {
  token: Address;
  pool: Address;
  mint(to: Address, amount: bigint): Promise<void>;
  send(account: PrivateKeyAccount, to: Address, data: Hex): Promise<Outcome>;
  balanceOf(address: Address): Promise<bigint>;
  allowance(owner: Address, spender: Address): Promise<bigint>;
};

function simulator(): Harness {
  const chain = new SimChainEngine("POLYGON_AMOY", memorySimStorage(), fixedClock(new Date("2026-11-21T10:00:00.000Z")));
  const chainId = CHAIN_CONFIG.POLYGON_AMOY.chainId!;
  return {
    token: getAddress(CHAIN_CONFIG.POLYGON_AMOY.token.address),
    pool: getAddress(CHAIN_CONFIG.POLYGON_AMOY.pool!),
    mint: async (address, amount) => void (await chain.faucet({ address, amount })),
    async send(account, to, data) {
      const nonce = await chain.nonceOf(account.address);
      const serializedTransaction = await account.signTransaction({ chainId, nonce, to, data, gas: 200_000n, maxFeePerGas: 1n, maxPriorityFeePerGas: 1n });
      const result = await chain.submitEvmTransaction({ serializedTransaction });
      const [tx] = (await chain.readTransactions(result.blockNumber - 1, 1)).transactions;
      if (tx?.family !== "EVM") throw new Error("no EVM transaction");
      return { status: tx.status, logs: tx.logs };
    },
    balanceOf: (address) => chain.balanceOf(address),
    allowance: (owner, spender) => chain.allowance(owner, spender),
  };
}

function anvil(node: AnvilNode, deployment: RehearsalDeployment): Harness {
  return {
    token: deployment.usdc,
    pool: deployment.pool,
    mint: (to, amount) => mintUsdc(node, deployment, to, amount),
    async send(account, to, data) {
      await node.test.setBalance({ address: account.address, value: 10n ** 18n });
      // An explicit gas limit: a call that reverts is still mined, as a wallet that skips estimation would send it.
      const hash = await node.wallet(account).sendTransaction({ account, chain: null, to, data, gas: 200_000n });
      const receipt = await node.public.waitForTransactionReceipt({ hash, pollingInterval: 20 });
      return {
        status: receipt.status,
        logs: receipt.logs.map((l) => ({ address: getAddress(l.address), topics: l.topics, data: l.data, logIndex: l.logIndex })),
      };
    },
    balanceOf: (address) => node.public.readContract({ address: deployment.usdc, abi: erc20Abi, functionName: "balanceOf", args: [address] }),
    allowance: (owner, spender) => node.public.readContract({ address: deployment.usdc, abi: erc20Abi, functionName: "allowance", args: [owner, spender] }),
  };
}

type Case = {
  name: string;
  /** What the payer holds before. */
  balance: bigint;
  /** What the payer approves the pool for (0: no approve sent). */
  approve: bigint;
  amount: bigint;
  /** Which address the repay names as collections. */
  collections: "collections" | "elsewhere" | "zero";
};

const CASES: Case[] = [
  { name: "full repay", balance: 102_000_000n, approve: 102_000_000n, amount: 102_000_000n, collections: "collections" },
  { name: "partial repay", balance: 102_000_000n, approve: 102_000_000n, amount: 40_000_000n, collections: "collections" },
  { name: "zero amount", balance: 102_000_000n, approve: 102_000_000n, amount: 0n, collections: "collections" },
  { name: "no allowance", balance: 102_000_000n, approve: 0n, amount: 102_000_000n, collections: "collections" },
  { name: "insufficient balance", balance: 50_000_000n, approve: 102_000_000n, amount: 102_000_000n, collections: "collections" },
  {
    name: "wrong collections (the contract pays whatever address it is given)",
    balance: 102_000_000n,
    approve: 102_000_000n,
    amount: 102_000_000n,
    collections: "elsewhere",
  },
  { name: "zero collections address", balance: 102_000_000n, approve: 102_000_000n, amount: 102_000_000n, collections: "zero" },
];

/** Runs one case on `h` with fresh accounts; what happened, with addresses replaced by their roles. */
async function run(h: Harness, c: Case) {
  const payer = privateKeyToAccount(generatePrivateKey());
  const collections = privateKeyToAccount(generatePrivateKey()).address;
  const elsewhere = privateKeyToAccount(generatePrivateKey()).address;
  const named = { collections, elsewhere, zero: zeroAddress }[c.collections];
  if (c.balance > 0n) await h.mint(payer.address, c.balance);
  if (c.approve > 0n) {
    const approved = await h.send(payer, h.token, encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [h.pool, c.approve] }));
    expect(approved.status).toBe("success");
  }
  const watched = { payer: payer.address, collections, elsewhere, pool: h.pool } as const;
  const before = await balances(h, watched);
  const outcome = await h.send(
    payer,
    h.pool,
    encodeFunctionData({ abi: SVC_POOL_ABI, functionName: "repay", args: [loanIdToBytes32(LOAN_ID), named, c.amount] }),
  );
  const after = await balances(h, watched);
  const role = (a: string) => Object.entries({ ...watched, token: h.token, zero: zeroAddress }).find(([, v]) => v.toLowerCase() === a.toLowerCase())?.[0] ?? a;
  return {
    status: outcome.status,
    moved: Object.fromEntries(Object.keys(watched).map((k) => [k, after[k]! - before[k]!])),
    allowanceLeft: await h.allowance(payer.address, h.pool),
    logs: outcome.logs.map((l) => ({ address: role(l.address), ...byRole(l, role) })),
  };
}

async function balances(h: Harness, watched: Record<string, Address>): Promise<Record<string, bigint>> {
  return Object.fromEntries(await Promise.all(Object.entries(watched).map(async ([k, a]) => [k, await h.balanceOf(a)] as const)));
}

function byRole(log: EvmLog, role: (a: string) => string) {
  const decoded = decodeEventLog({ abi: [...SVC_POOL_ABI, ...erc20Abi], topics: log.topics as [Hex, ...Hex[]], data: log.data as Hex });
  const args = Object.fromEntries(
    Object.entries(decoded.args as Record<string, unknown>).map(([k, v]) => [k, typeof v === "string" && v.length === 42 ? role(v) : v]),
  );
  return { event: decoded.eventName, args };
}

let node: AnvilNode;
let onAnvil: Harness;

beforeAll(async () => {
  node = await startAnvil({ chainId: 137 });
  onAnvil = anvil(node, await deployRehearsalContracts(node));
});
afterAll(async () => {
  await node?.stop();
});

describe("SvcPool.repay: the simulator does exactly what the compiled contract does on Anvil", () => {
  test.each(CASES)("$name", async (c) => {
    const [sim, real] = [await run(simulator(), c), await run(onAnvil, c)];
    expect(sim).toEqual(real);
    // And what that is, so both cannot drift together unnoticed.
    if (c.amount === 0n || c.collections === "zero" || c.approve < c.amount || c.balance < c.amount) {
      expect(real).toMatchObject({ status: "reverted", logs: [], moved: { payer: 0n, collections: 0n, elsewhere: 0n, pool: 0n } });
      return;
    }
    const to = c.collections === "collections" ? "collections" : "elsewhere";
    expect(real.status).toBe("success");
    expect(real.moved).toEqual({
      payer: -c.amount,
      collections: to === "collections" ? c.amount : 0n,
      elsewhere: to === "elsewhere" ? c.amount : 0n,
      pool: 0n,
    });
    expect(real.allowanceLeft).toBe(c.approve - c.amount);
    expect(real.logs).toEqual([
      { address: "token", event: "Transfer", args: { from: "payer", to, value: c.amount } },
      { address: "pool", event: "Repaid", args: { loanId: loanIdToBytes32(LOAN_ID), payer: "payer", collections: to, amount: c.amount } },
    ]);
  });
});
