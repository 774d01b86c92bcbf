import type { ChainPort } from "../../chain-port.ts";
import type { LiveChainEnv, LiveChainSettings } from "../../live/live-config.ts";
import type { SignerSource } from "../../live/signer-source.ts";

/** What the TON adapter is built from: the TON settings, the sealed signers, and the worker's environment (its bindings). */
export type TonLivePortOptions = { settings: LiveChainSettings; signers: SignerSource; env: LiveChainEnv & Record<string, unknown> };

/**
 * The live TON adapter through @ton/ton. Not built yet (issue 13 item 5):
 * until then the chain answers as not enabled.
 */
export function tonLivePort({ settings }: TonLivePortOptions): ChainPort {
  return {
    transfer: async () => ({ success: false, errorReason: `${settings.chain} funding is not enabled yet`, txHash: null }),
    readTransactions: async () => {
      throw new RangeError(`${settings.chain} is not readable yet`);
    },
    balances: async () => null,
  };
}
