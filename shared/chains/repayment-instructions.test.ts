import { Address } from "@ton/core";
import { describe, expect, test } from "bun:test";
import { decodeFunctionData, erc20Abi, parseGwei, parseTransaction, recoverTransactionAddress, type TransactionSerialized } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { Chain } from "../domain/rails.ts";
import { CHAIN_CONFIG } from "./chain-config.ts";
import { SVC_POOL_ABI } from "./evm/svc-pool-abi.ts";
import { bytes32ToLoanId } from "./loan-id.ts";
import {
  type EvmRepaymentInstructions,
  parseRepaymentComment,
  repaymentComment,
  repaymentInstructions,
  type SolanaRepaymentInstructions,
  type TonRepaymentInstructions,
} from "./repayment-instructions.ts";

const loanId = "5b0e1c0a-6f7d-4c1e-9a3b-2f1d0c9e8a7b";
const totalDue = 102_000_000n; // 102.00
// Hardhat's well-known account #1: a test key, never funded anywhere real.
const borrower = privateKeyToAccount("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d");

const evm = (chain: Chain, due = totalDue) => {
  const result = repaymentInstructions({ loanId, chain, totalDue: due });
  if (!result.supported) throw new Error(result.reason);
  return result as EvmRepaymentInstructions;
};

describe.each(["POLYGON_AMOY", "BASE_SEPOLIA"] as const)("EVM repayment on %s", (chain) => {
  const config = CHAIN_CONFIG[chain];

  test("has the DECISIONS.md shape: token, spender, amounts, approve then repay", () => {
    const r = evm(chain);
    expect(Object.keys(r).sort()).toEqual(
      ["chain", "supported", "chainId", "token", "spender", "collections", "amount", "amountUnits", "loanIdBytes32", "transactions"].sort(),
    );
    expect(r).toMatchObject({
      chain,
      supported: true,
      chainId: config.chainId!,
      token: { address: config.token.address, symbol: "USDC", decimals: 6 },
      spender: config.pool!,
      // Sandbox: the simulated pool collects, so the pool is also where repay sends the money.
      collections: config.pool!,
      amount: "102.00",
      amountUnits: "102000000",
    });
    const [approve, repay] = r.transactions;
    expect(approve.to).toBe(config.token.address as `0x${string}`);
    expect(repay.to).toBe(config.pool! as `0x${string}`);
    for (const tx of r.transactions) {
      expect(Object.keys(tx).sort()).toEqual(["data", "description", "to", "value"]);
      expect(tx.value).toBe("0");
      expect(tx.description.length).toBeGreaterThan(0);
    }
  });

  test("approve lets the pool take exactly the total due", () => {
    const { transactions } = evm(chain);
    const call = decodeFunctionData({ abi: erc20Abi, data: transactions[0].data });
    expect(call.functionName).toBe("approve");
    expect(call.args).toEqual([config.pool! as `0x${string}`, totalDue]);
  });

  test("repay carries the loan id as bytes32 and the total due, against the compiled ABI", () => {
    const r = evm(chain);
    const call = decodeFunctionData({ abi: SVC_POOL_ABI, data: r.transactions[1].data });
    expect(call.functionName).toBe("repay");
    const [bytes32, collections, amount] = call.args as readonly [`0x${string}`, `0x${string}`, bigint];
    expect(bytes32).toBe(r.loanIdBytes32);
    expect(collections).toBe(config.pool! as `0x${string}`);
    expect(bytes32ToLoanId(bytes32)).toBe(loanId);
    expect(amount).toBe(totalDue);
  });

  test("both transactions are signable as is by a viem local account", async () => {
    const r = evm(chain);
    for (const [nonce, tx] of r.transactions.entries()) {
      const signed = await borrower.signTransaction({
        to: tx.to,
        data: tx.data,
        value: BigInt(tx.value),
        chainId: r.chainId,
        nonce,
        gas: 100_000n,
        maxFeePerGas: parseGwei("2"),
        maxPriorityFeePerGas: parseGwei("1"),
      });
      const parsed = parseTransaction(signed);
      expect(parsed).toMatchObject({ to: tx.to.toLowerCase(), data: tx.data, chainId: r.chainId, nonce, type: "eip1559" });
      expect(parsed.value ?? 0n).toBe(0n);
      expect(await recoverTransactionAddress({ serializedTransaction: signed as TransactionSerialized })).toBe(borrower.address);
    }
  });

  test("a total with sub-cent units keeps 6 decimals rather than round", () => {
    const r = evm(chain, 102_000_001n);
    expect(r.amount).toBe("102.000001");
    expect(r.amountUnits).toBe("102000001");
  });
});

describe("TON repayment on TON_TESTNET", () => {
  const r = repaymentInstructions({ loanId, chain: "TON_TESTNET", totalDue }) as TonRepaymentInstructions;
  const config = CHAIN_CONFIG.TON_TESTNET;

  test("has exactly the SPEC.md fields", () => {
    expect(Object.keys(r).sort()).toEqual(["chain", "supported", "to", "asset", "amount", "amountUnits", "comment", "jettonMaster", "links"].sort());
    expect(r).toMatchObject({
      chain: "TON_TESTNET",
      supported: true,
      asset: "USDT",
      amount: "102.000000",
      amountUnits: "102000000",
      comment: `svc:repay:${loanId}`,
    });
  });

  test("sends to the settlement wallet (non-bounceable, testnet) and names the USDT jetton master (bounceable)", () => {
    expect(r.to).toMatch(/^0Q/);
    expect(Address.parse(r.to).equals(Address.parse(config.settlementWallet!))).toBe(true);
    expect(r.jettonMaster).toMatch(/^kQ/);
    expect(Address.parse(r.jettonMaster).equals(Address.parse(config.token.address))).toBe(true);
  });

  test("links.ton is a ton://transfer link carrying jetton, amount and text", () => {
    const url = new URL(r.links.ton);
    expect(url.protocol).toBe("ton:");
    expect(r.links.ton.startsWith(`ton://transfer/${r.to}?`)).toBe(true);
    expect(url.searchParams.get("jetton")).toBe(r.jettonMaster);
    expect(url.searchParams.get("amount")).toBe("102000000");
    expect(url.searchParams.get("text")).toBe(`svc:repay:${loanId}`);
    expect(r.links.ton).toContain("text=svc%3Arepay%3A");
    expect(r.links.tonkeeper).toBe(r.links.ton.replace("ton://transfer/", "https://app.tonkeeper.com/transfer/"));
  });

  test("the amount follows the total due to the unit (late fees)", () => {
    const later = repaymentInstructions({ loanId, chain: "TON_TESTNET", totalDue: 103_250_000n }) as TonRepaymentInstructions;
    expect(later.amount).toBe("103.250000");
    expect(later.amountUnits).toBe("103250000");
    expect(new URL(later.links.ton).searchParams.get("amount")).toBe("103250000");
  });
});

describe("Solana repayment on SOLANA_DEVNET", () => {
  test("is an SPL USDC transfer to the settlement wallet with the memo, as a Solana Pay link", () => {
    const r = repaymentInstructions({ loanId, chain: "SOLANA_DEVNET", totalDue }) as SolanaRepaymentInstructions;
    const config = CHAIN_CONFIG.SOLANA_DEVNET;
    expect(r).toEqual({
      chain: "SOLANA_DEVNET",
      supported: true,
      to: config.settlementWallet!,
      asset: "USDC",
      mint: config.token.address,
      amount: "102.00",
      amountUnits: "102000000",
      memo: `svc:repay:${loanId}`,
      links: { solana: r.links.solana },
    });
    const url = new URL(r.links.solana);
    expect(url.protocol).toBe("solana:");
    expect(url.pathname).toBe(config.settlementWallet!);
    expect(url.searchParams.get("amount")).toBe("102.00");
    expect(url.searchParams.get("spl-token")).toBe(config.token.address);
    expect(url.searchParams.get("memo")).toBe(`svc:repay:${loanId}`);
  });
});

describe("live chains without a pool or settlement wallet", () => {
  test.each(["POLYGON", "BASE", "TON"] as const)("%s is not supported yet, with a reason", (chain) => {
    const r = repaymentInstructions({ loanId, chain, totalDue });
    expect(r).toEqual({ supported: false, chain, reason: expect.stringContaining(chain) });
  });
});

describe("live EVM: the deployment's pool pays the tenant's COLLECTIONS wallet", () => {
  const POOL = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
  const TOKEN = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512";
  const COLLECTIONS = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";
  const config = { ...CHAIN_CONFIG.POLYGON, token: { ...CHAIN_CONFIG.POLYGON.token, address: TOKEN }, pool: POOL };

  test("approve lets the configured pool take the total; repay names the COLLECTIONS wallet", () => {
    const r = repaymentInstructions({ loanId, chain: "POLYGON", totalDue, config, collections: COLLECTIONS.toLowerCase() }) as EvmRepaymentInstructions;
    expect(r).toMatchObject({ chain: "POLYGON", supported: true, chainId: 137, token: { address: TOKEN }, spender: POOL, collections: COLLECTIONS });
    expect(r.transactions[0].to).toBe(TOKEN);
    expect(decodeFunctionData({ abi: erc20Abi, data: r.transactions[0].data }).args).toEqual([POOL, totalDue]);
    expect(r.transactions[1].to).toBe(POOL);
    expect(decodeFunctionData({ abi: SVC_POOL_ABI, data: r.transactions[1].data }).args).toEqual([r.loanIdBytes32, COLLECTIONS, totalDue]);
  });

  test("without a verified COLLECTIONS wallet: not supported, and the reason says what to do", () => {
    for (const collections of [undefined, null]) {
      const r = repaymentInstructions({ loanId, chain: "POLYGON", totalDue, config, collections });
      expect(r).toEqual({ supported: false, chain: "POLYGON", reason: expect.stringContaining("COLLECTIONS wallet on POLYGON") });
    }
  });

  test("a sandbox chain ignores a collections address: the simulated pool collects", () => {
    const r = repaymentInstructions({ loanId, chain: "POLYGON_AMOY", totalDue, collections: COLLECTIONS }) as EvmRepaymentInstructions;
    expect(r.collections).toBe(CHAIN_CONFIG.POLYGON_AMOY.pool! as `0x${string}`);
  });
});

describe("caller errors", () => {
  test("a non-positive total due throws", () => {
    expect(() => repaymentInstructions({ loanId, chain: "POLYGON_AMOY", totalDue: 0n })).toThrow(RangeError);
    expect(() => repaymentInstructions({ loanId, chain: "TON_TESTNET", totalDue: -1n })).toThrow(RangeError);
  });

  test("a loan id that is not a lowercase UUID throws, on every chain", () => {
    for (const chain of ["POLYGON_AMOY", "TON_TESTNET", "SOLANA_DEVNET"] as const) {
      expect(() => repaymentInstructions({ loanId: loanId.toUpperCase(), chain, totalDue })).toThrow(RangeError);
      expect(() => repaymentInstructions({ loanId: "loan-1", chain, totalDue })).toThrow(RangeError);
    }
  });
});

describe("repayment comments", () => {
  test("round-trip", () => {
    expect(repaymentComment(loanId)).toBe(`svc:repay:${loanId}`);
    expect(parseRepaymentComment(repaymentComment(loanId))).toBe(loanId);
  });

  test.each([
    ["null", null],
    ["empty", ""],
    ["uppercase id", `svc:repay:${loanId.toUpperCase()}`],
    ["uppercase prefix", `SVC:REPAY:${loanId}`],
    ["leading space", ` svc:repay:${loanId}`],
    ["trailing space", `svc:repay:${loanId} `],
    ["trailing newline", `svc:repay:${loanId}\n`],
    ["space after prefix", `svc:repay: ${loanId}`],
    ["extra text", `svc:repay:${loanId} thanks`],
    ["text before", `pay svc:repay:${loanId}`],
    ["other prefix", `svc:refund:${loanId}`],
    ["prefix only", "svc:repay:"],
    ["id without dashes", `svc:repay:${loanId.replace(/-/g, "")}`],
    ["truncated id", `svc:repay:${loanId.slice(0, -1)}`],
    ["not hex", `svc:repay:${loanId.replace("5b", "zz")}`],
    ["two ids", `svc:repay:${loanId}svc:repay:${loanId}`],
  ] as const)("%s is not a repayment comment", (_, comment) => {
    expect(parseRepaymentComment(comment)).toBeNull();
  });
});
