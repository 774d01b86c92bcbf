/**
 * Test smart-contract wallets (OwnerWallet.sol, beside this file): an
 * ERC-1271 wallet with one owner key and a CREATE2 factory for it, compiled
 * with the `solc` npm package and deployed into an `EvmEmulator`.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import solc from "solc";
import { decodeFunctionResult, encodeFunctionData, pad, type Abi, type Address, type Hex } from "viem";
import type { EvmEmulator } from "./evm-emulator.ts";

type Compiled = { abi: Abi; bytecode: Hex };

let compiled: { wallet: Compiled; factory: Compiled } | null = null;

/** OwnerWallet and OwnerWalletFactory as solc compiles them (once per process: solc takes about a second). */
export function compileOwnerWallets(): { wallet: Compiled; factory: Compiled } {
  if (compiled) return compiled;
  const input = {
    language: "Solidity",
    sources: { "OwnerWallet.sol": { content: readFileSync(join(import.meta.dir, "OwnerWallet.sol"), "utf8") } },
    // Cancun: opcodes the emulator's default hardfork certainly runs.
    settings: { evmVersion: "cancun", optimizer: { enabled: true, runs: 200 }, outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } } },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join("\n"));
  const pick = (name: string): Compiled => {
    const c = output.contracts["OwnerWallet.sol"]![name]!;
    return { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
  };
  compiled = { wallet: pick("OwnerWallet"), factory: pick("OwnerWalletFactory") };
  return compiled;
}

/** A factory deployed into `emu`, and what a test needs of it. */
export async function deployOwnerWalletFactory(emu: EvmEmulator) {
  const { factory } = compileOwnerWallets();
  const address = await emu.deploy(factory.bytecode);
  const salted = (salt: bigint) => pad(`0x${salt.toString(16)}`);
  const createAccountCalldata = (owner: Address, salt: bigint): Hex =>
    encodeFunctionData({ abi: factory.abi, functionName: "createAccount", args: [owner, salted(salt)] });
  return {
    address,
    /** The calldata that deploys the owner's wallet for `salt` (the ERC-6492 `data`). */
    createAccountCalldata,
    /** The wallet's CREATE2 address, deployed or not. */
    async addressOf(owner: Address, salt: bigint): Promise<Address> {
      const data = encodeFunctionData({ abi: factory.abi, functionName: "addressOf", args: [owner, salted(salt)] });
      const result = await emu.send({ to: address, data });
      return decodeFunctionResult({ abi: factory.abi, functionName: "addressOf", data: result }) as Address;
    },
    /** Deploys the owner's wallet for `salt`; its address. */
    async createAccount(owner: Address, salt: bigint): Promise<Address> {
      const result = await emu.send({ to: address, data: createAccountCalldata(owner, salt) });
      return decodeFunctionResult({ abi: factory.abi, functionName: "createAccount", data: result }) as Address;
    },
  };
}
