import { encodeAbiParameters, type Address, type Hex } from "viem";
import type { EvmLog } from "../chain-port.ts";

// What the simulated contracts (sim-erc20.ts, sim-pool.ts) share with the
// executor that runs them (sim-evm-execution.ts).

/** A call to execute: `to` null is a contract creation, which is not simulated. */
export type EvmCall = { from: Address; to: Address | null; data: Hex };

/** An EVM revert inside execution: rolls back the call, not the transaction's inclusion. */
export class Revert extends Error {}

export function decodeOrRevert<T>(decode: () => T): T {
  try {
    return decode();
  } catch {
    throw new Revert("no function matches the calldata");
  }
}

/**
 * A log whose data is one uint256 (every event the contracts emit). The
 * executor numbers the logs of a call; every indexed argument is given, so
 * every topic is a single 32-byte value.
 */
export function amountLog(address: string, topics: readonly unknown[], amount: bigint): EvmLog {
  return { address, topics: topics as string[], data: encodeAbiParameters([{ type: "uint256" }], [amount]), logIndex: 0 };
}
