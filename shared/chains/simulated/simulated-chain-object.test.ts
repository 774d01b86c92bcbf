import { beforeAll, beforeEach, describe, expect, mock, test } from "bun:test";
import { encodeFunctionData, erc20Abi, getAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { CHAIN_CONFIG } from "../chain-config.ts";
import { SVC_POOL_ABI } from "../evm/svc-pool-abi.ts";
import { loanIdToBytes32 } from "../loan-id.ts";
import { durableSimulatedChains } from "./durable-simulated-chains.ts";
import { SimChainRejected } from "./sim-chain-rejected.ts";
import type { SimulatedChains } from "./sim-chains.ts";
import { memorySimStorage, type SimStorage } from "./sim-storage.ts";
import type { SimulatedChainObject } from "./simulated-chain-object.ts";

/*
 * Bun cannot load `cloudflare:workers`; a stand-in base class lets the object
 * run here over memory storage, behind a namespace that behaves like RPC:
 * arguments and results are structured-cloned, and a thrown error arrives as a
 * plain Error (its class is lost on the way, which is why rejections travel
 * as values).
 */
mock.module("cloudflare:workers", () => ({
  DurableObject: class {
    constructor(
      protected ctx: { storage: SimStorage },
      protected env: unknown,
    ) {}
  },
}));

type ObjectClass = new (ctx: { storage: SimStorage }, env: unknown) => SimulatedChainObject;
let ObjectClass: ObjectClass;

beforeAll(async () => {
  ObjectClass = (await import("./simulated-chain-object.ts")).SimulatedChainObject as unknown as ObjectClass;
});

function fakeNamespace() {
  const objects = new Map<string, SimulatedChainObject>();
  const ids: string[] = [];
  const namespace = {
    idFromName: (name: string) => ({ name }),
    get: ({ name }: { name: string }) => {
      ids.push(name);
      let object = objects.get(name);
      if (!object) {
        object = new ObjectClass({ storage: memorySimStorage() }, {});
        objects.set(name, object);
      }
      const target = object;
      return new Proxy(
        {},
        {
          get:
            (_, method: string) =>
            async (...args: unknown[]) => {
              try {
                const fn = (target as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[method]!;
                return structuredClone(await fn.apply(target, structuredClone(args)));
              } catch (error) {
                throw new Error((error as Error).message);
              }
            },
        },
      );
    },
  };
  return { namespace: namespace as unknown as DurableObjectNamespace<SimulatedChainObject>, ids, objects };
}

const POOL = getAddress(CHAIN_CONFIG.POLYGON_AMOY.pool!);
const TOKEN = getAddress(CHAIN_CONFIG.POLYGON_AMOY.token.address);
const LOAN_ID = "5b0e1c0a-6f7d-4c1e-9a3b-2f1d0c9e8a7b";
const TENANT = "tenant-1";

let fake: ReturnType<typeof fakeNamespace>;
let chains: SimulatedChains;

beforeEach(() => {
  fake = fakeNamespace();
  chains = durableSimulatedChains(fake.namespace);
});

describe("durableSimulatedChains over SimulatedChainObject", () => {
  test("the borrower's approve and repay, through the chain's object", async () => {
    const borrower = privateKeyToAccount(generatePrivateKey());
    const amoy = chains.chain("POLYGON_AMOY", TENANT);
    const tx = (nonce: number, to: `0x${string}`, data: `0x${string}`) =>
      borrower.signTransaction({ chainId: 80002, nonce, to, data, gas: 100_000n, maxFeePerGas: 1n, maxPriorityFeePerGas: 1n, type: "eip1559" });

    await amoy.faucet({ address: borrower.address, amount: 10_000_000n });
    await amoy.submitEvmTransaction({
      serializedTransaction: await tx(0, TOKEN, encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [POOL, 10_000_000n] })),
    });
    const repaid = await amoy.submitEvmTransaction({
      serializedTransaction: await tx(
        1,
        POOL,
        encodeFunctionData({ abi: SVC_POOL_ABI, functionName: "repay", args: [loanIdToBytes32(LOAN_ID), POOL, 4_000_000n] }),
      ),
      sandboxTenantId: "tenant-1",
    });
    expect(repaid).toMatchObject({ status: "success", blockNumber: 3, from: borrower.address, revertReason: null });
    expect(await amoy.balanceOf(borrower.address)).toBe(6_000_000n);
    expect(await amoy.allowance(borrower.address, POOL)).toBe(6_000_000n);
    expect(await amoy.nonceOf(borrower.address)).toBe(2);
    expect(await amoy.head()).toBe(3);
    const { transactions } = await amoy.readTransactions(2, 10);
    expect(transactions).toMatchObject([{ hash: repaid.txHash, status: "success", sandboxTenantId: "tenant-1" }]);
    expect(transactions[0]!.family === "EVM" && transactions[0]!.logs).toHaveLength(2);
    expect(await amoy.getTransaction(repaid.txHash)).toMatchObject({ kind: "evm", failureReason: null });
    expect(new Set(fake.ids)).toEqual(new Set([`${TENANT}:POLYGON_AMOY`]));
  });

  test("a rejection crosses RPC as a SimChainRejected with its reason", async () => {
    const error = await chains
      .chain("POLYGON_AMOY", TENANT)
      .submitEvmTransaction({ serializedTransaction: "0x02c0ffee" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SimChainRejected);
    expect((error as Error).message).toBe("the transaction cannot be parsed as a serialized EVM transaction");
  });

  test("TON transfers, emitLogAs and funding go to their chains' objects", async () => {
    const wallet = `0:${"11".repeat(32)}`;
    const ton = chains.chain("TON_TESTNET", TENANT);
    await ton.fundFromPool({ loanId: LOAN_ID, to: wallet, amount: 3n, reference: `funding:${LOAN_ID}` });
    const failed = await ton.transferToken({ from: wallet, to: CHAIN_CONFIG.TON_TESTNET.settlementWallet!, amount: 4n, comment: `svc:repay:${LOAN_ID}` });
    expect(failed.status).toBe("failed");
    expect(await ton.balanceOf(wallet)).toBe(3n);

    const emitted = await chains
      .chain("BASE_SEPOLIA", TENANT)
      .emitLogAs({ address: "0x000000000000000000000000000000000000bad1", topics: [], data: "0x", from: "0x000000000000000000000000000000000000bad2" });
    expect(emitted.blockNumber).toBe(1);
    expect([...fake.objects.keys()].sort()).toEqual([`${TENANT}:BASE_SEPOLIA`, `${TENANT}:TON_TESTNET`]);
  });

  test("a live chain never reaches an object", () => {
    expect(() => chains.chain("POLYGON", TENANT)).toThrow(RangeError);
    expect(() => chains.chain("POLYGON_AMOY", "")).toThrow(RangeError);
    expect(fake.ids).toEqual([]);
  });

  test("an object serves one tenant's ledger of one chain only; a mix-up is an error, not a rejection", async () => {
    const { namespace, objects } = fakeNamespace();
    await durableSimulatedChains(namespace).chain("TON_TESTNET", TENANT).head();
    const object = objects.get(`${TENANT}:TON_TESTNET`)!;
    await expect(object.head({ chain: "SOLANA_DEVNET", name: `${TENANT}:SOLANA_DEVNET` })).rejects.toThrow(
      `this object simulates ${TENANT}:TON_TESTNET, not ${TENANT}:SOLANA_DEVNET`,
    );
    await expect(object.head({ chain: "TON_TESTNET", name: "tenant-2:TON_TESTNET" })).rejects.toThrow(
      `this object simulates ${TENANT}:TON_TESTNET, not tenant-2:TON_TESTNET`,
    );
  });

  test("each tenant's ledger is its own object: one tenant's faucet is invisible to another", async () => {
    const wallet = `0:${"33".repeat(32)}`;
    await chains.chain("TON_TESTNET", TENANT).faucet({ address: wallet, amount: 7n });
    expect(await chains.chain("TON_TESTNET", "tenant-2").balanceOf(wallet)).toBe(0n);
    expect(await chains.chain("TON_TESTNET", "tenant-2").head()).toBe(0);
    expect(await chains.chain("TON_TESTNET", TENANT).balanceOf(wallet)).toBe(7n);
    expect([...fake.objects.keys()].sort()).toEqual([`${TENANT}:TON_TESTNET`, "tenant-2:TON_TESTNET"]);
  });
});
