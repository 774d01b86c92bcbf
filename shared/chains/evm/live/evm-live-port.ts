import type { ChainPort } from "../../chain-port.ts";
import type { LiveChainEnv, LiveChainSettings } from "../../live/live-config.ts";
import type { SignerSource } from "../../live/signer-source.ts";

/** What the EVM adapter is built from: one live EVM chain's settings, the sealed signers, and the worker's environment (its bindings). */
export type EvmLivePortOptions = { settings: LiveChainSettings; signers: SignerSource; env: LiveChainEnv & Record<string, unknown> };

/**
 * The live EVM adapter (POLYGON, BASE) through viem. Not built yet (issue 13
 * item 2): until then the chain answers as not enabled.
 */
export function evmLivePort({ settings }: EvmLivePortOptions): ChainPort {
  return {
    transfer: async () => ({ success: false, errorReason: `${settings.chain} funding is not enabled yet`, txHash: null }),
    readTransactions: async () => {
      throw new RangeError(`${settings.chain} is not readable yet`);
    },
    balances: async () => null,
  };
}
