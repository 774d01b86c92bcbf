import type { Address } from "viem";
import type { EvmLog } from "../chain-port.ts";
import { include } from "./sim-blocks.ts";
import type { SimChainContext } from "./sim-chain-context.ts";
import type { SimEmitLogInput, SimEmitLogResult } from "./sim-chain-ops.ts";
import { SimChainRejected } from "./sim-chain-rejected.ts";
import { bumpNonce } from "./sim-ledger-store.ts";
import type { WorkingState } from "./sim-working-state.ts";

/**
 * EVM: a successful transaction whose only log comes from `input.address`, a
 * contract that is not ours, so tests prove the listener ignores look-alike
 * Transfer and Repaid logs. The stablecoin and the pool log only from their
 * own code.
 */
export async function emitLogAs(ctx: SimChainContext, state: WorkingState, input: SimEmitLogInput): Promise<SimEmitLogResult> {
  ctx.requireFamily("EVM", "emitLogAs");
  const address = ctx.address(input.address, "address") as Address;
  if (address === ctx.stablecoin || address === ctx.pool()) {
    throw new SimChainRejected(`${address} is a contract this chain executes; its logs come only from its own code`);
  }
  const from = ctx.address(input.from, "from") as Address;
  if (!Array.isArray(input.topics) || input.topics.length > 4 || !input.topics.every((t) => /^0x[0-9a-fA-F]{64}$/.test(t))) {
    throw new SimChainRejected("topics must be at most 4 hex strings of 32 bytes");
  }
  if (typeof input.data !== "string" || !/^0x([0-9a-fA-F]{2})*$/.test(input.data)) {
    throw new SimChainRejected("data must be a 0x-prefixed hex string of whole bytes");
  }
  await bumpNonce(state, from);
  const log: EvmLog = { address, topics: input.topics.map((t) => t.toLowerCase()), data: input.data.toLowerCase(), logIndex: 0 };
  const tx = await include(ctx, state, ({ number, timestamp }) => ({
    family: "EVM",
    chain: ctx.chain,
    hash: ctx.syntheticHash("impostor", number, from, address),
    blockNumber: number,
    timestamp,
    from,
    to: address,
    input: "0x",
    status: "success",
    logs: [log],
    sandboxTenantId: input.sandboxTenantId ?? null,
    kind: "impostor",
    failureReason: null,
  }));
  return { txHash: tx.hash, blockNumber: tx.blockNumber };
}
