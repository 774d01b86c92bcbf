/**
 * An in-memory EVM (the @ethereumjs/evm interpreter, no network, no blocks)
 * behind an EIP-1193 `request`, answering the few JSON-RPC methods viem's
 * public actions need here: `eth_call` (with `to`, or deployless with init
 * code and no `to`), `eth_chainId`, `eth_blockNumber`, `eth_getCode`.
 * Tests only: the adapter under test talks to it as it would to a node.
 */
import { createEVM, type EVM } from "@ethereumjs/evm";
import { createAddressFromString, createZeroAddress } from "@ethereumjs/util";
import { bytesToHex, custom, hexToBytes, type Address, type Hex, type Transport } from "viem";

/** The error a node answers for a reverted `eth_call` (EIP-1474 code 3); viem does not retry it. */
class ExecutionReverted extends Error {
  readonly code = 3;
  constructor(readonly data: Hex) {
    super("execution reverted");
  }
}

const GAS_LIMIT = 30_000_000n;

export type EvmEmulator = {
  /** An EIP-1193 transport over this EVM, for `createPublicClient({ transport })`. */
  transport: Transport;
  /** Runs init code and keeps the contract; its address. */
  deploy(initCode: Hex): Promise<Address>;
  /** Runs a call and keeps its state changes; the return data (throws on revert). */
  send(call: { to: Address; data: Hex }): Promise<Hex>;
  /** The code at an address (0x when none). */
  code(address: Address): Promise<Hex>;
};

/**
 * A fresh emulator reporting `chainId`. State persists only through
 * `deploy` and `send`; `eth_call` runs inside a checkpoint it reverts.
 *
 * @example const emu = await createEvmEmulator(80002); createPublicClient({ transport: emu.transport })
 */
export async function createEvmEmulator(chainId: number): Promise<EvmEmulator> {
  const evm: EVM = await createEVM();
  const deployer = createAddressFromString("0x00000000000000000000000000000000000d0d0d");

  async function run(input: { from?: string; to?: string | null; data?: Hex }, keep: boolean) {
    const state = evm.stateManager;
    await state.checkpoint();
    try {
      const result = await evm.runCall({
        caller: input.from ? createAddressFromString(input.from) : keep ? deployer : createZeroAddress(),
        to: input.to ? createAddressFromString(input.to) : undefined,
        data: hexToBytes(input.data ?? "0x"),
        gasLimit: GAS_LIMIT,
        skipBalance: true,
      });
      const exec = result.execResult;
      if (exec.exceptionError) throw new ExecutionReverted(bytesToHex(exec.returnValue));
      if (keep) await state.commit();
      else await state.revert();
      return { returnValue: bytesToHex(exec.returnValue), createdAddress: result.createdAddress?.toString() as Address | undefined };
    } catch (err) {
      await state.revert();
      throw err;
    }
  }

  async function code(address: Address): Promise<Hex> {
    return bytesToHex(await evm.stateManager.getCode(createAddressFromString(address)));
  }

  async function request({ method, params }: { method: string; params?: unknown }): Promise<unknown> {
    const args = (params ?? []) as unknown[];
    switch (method) {
      case "eth_chainId":
        return `0x${chainId.toString(16)}`;
      case "eth_blockNumber":
        return "0x1";
      case "eth_getCode":
        return code(args[0] as Address);
      case "eth_call": {
        const tx = args[0] as { from?: string; to?: string | null; data?: Hex; input?: Hex };
        return (await run({ from: tx.from, to: tx.to, data: tx.data ?? tx.input }, false)).returnValue;
      }
      default:
        throw Object.assign(new Error(`the emulator does not serve ${method}`), { code: -32601 });
    }
  }

  return {
    transport: custom({ request }, { retryCount: 0 }),
    async deploy(initCode) {
      const { createdAddress } = await run({ data: initCode }, true);
      if (!createdAddress) throw new Error("deployment created no contract");
      return createdAddress;
    },
    async send(call) {
      return (await run(call, true)).returnValue;
    },
    code,
  };
}
