import type { Db } from "../../db/create-db.ts";
import { DEV_SECRETS_KEY } from "../crypto/secret-box.ts";
import type { Chain } from "../domain/rails.ts";
import { CHAINS } from "../domain/vocabularies.ts";
import { CHAIN_CONFIG } from "./chain-config.ts";
import type { ChainPort } from "./chain-port.ts";
import type { EvmSenderObject } from "./evm/live/evm-sender-object.ts";
import { evmLivePort } from "./evm/live/evm-live-port.ts";
import { type LiveChainEnv, liveChainSettings } from "./live/live-config.ts";
import { sealedSignerSource, type SignerSource } from "./live/signer-source.ts";
import { routedChainPort } from "./routed-chain-port.ts";
import { durableSimulatedChains } from "./simulated/durable-simulated-chains.ts";
import type { SimulatedChainObject } from "./simulated/simulated-chain-object.ts";
import type { SimulatedChains } from "./simulated/sim-chains.ts";
import { simulatedChainPort } from "./simulated/simulated-chain-port.ts";
import { tonLivePort } from "./ton/live/ton-live-port.ts";

/** The bindings and variables every worker's chain port is built from. */
export type ChainPortEnv = LiveChainEnv & {
  SIM_CHAINS: DurableObjectNamespace<SimulatedChainObject>;
  /** The live EVM senders' nonce books (EvmSenderObject, hosted by the api worker). */
  EVM_SENDERS?: DurableObjectNamespace<EvmSenderObject>;
  ENVIRONMENT?: string;
  SECRETS_KEY?: string;
};

/** SECRETS_KEY, or the development key under `npm run dev` and the tests; null in a deployment without one (no signer opens). */
export const secretsKeyOf = (env: { ENVIRONMENT?: string; SECRETS_KEY?: string }): string | null =>
  env.SECRETS_KEY || (env.ENVIRONMENT === "development" ? DEV_SECRETS_KEY : null);

const noSigners: SignerSource = { privateKey: async () => null };

/**
 * The one chain port of every worker (api, loan objects, cron): the
 * simulated chains for sandbox chains, and a live adapter for each live chain
 * this deployment configures (live-config.ts), signing with the sealed
 * signers. Built the same way everywhere, so a loan funded by the api and a
 * repayment read by the cron go through the same adapter.
 *
 * @example const chain = chainPortFromEnv(env, db)
 */
export function chainPortFromEnv(env: ChainPortEnv, db: Db, options: { simChains?: SimulatedChains } = {}): ChainPort {
  const simulated = simulatedChainPort(options.simChains ?? durableSimulatedChains(env.SIM_CHAINS));
  const secretsKey = secretsKeyOf(env);
  const signers = secretsKey ? sealedSignerSource(db, secretsKey) : noSigners;
  const ports: Partial<Record<Chain, ChainPort>> = {};
  for (const chain of CHAINS) if (CHAIN_CONFIG[chain].simulated) ports[chain] = simulated;
  const live = liveChainSettings(env);
  const bindings = env as ChainPortEnv & Record<string, unknown>;
  for (const settings of Object.values(live)) {
    ports[settings.chain] =
      settings.chain === "TON" ? tonLivePort({ settings, signers, env: bindings, db }) : evmLivePort({ settings, signers, env: bindings });
  }
  return routedChainPort(ports);
}
