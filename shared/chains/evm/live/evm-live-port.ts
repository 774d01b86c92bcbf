import { type Address, createPublicClient, erc20Abi, getAddress, http, isAddress, type PublicClient, type Transport } from "viem";
import { chainConfig } from "../../chain-config.ts";
import type { ChainPort, TransferResult } from "../../chain-port.ts";
import type { LiveChainEnv, LiveChainSettings } from "../../live/live-config.ts";
import type { SignerSource } from "../../live/signer-source.ts";
import { evmContractSignatures } from "../contract-signatures.ts";
import { WrongChainError } from "./evm-broadcast-errors.ts";
import { durableEvmSenders } from "./durable-evm-senders.ts";
import type { EvmSenders } from "./evm-send-record.ts";
import type { EvmSenderObject } from "./evm-sender-object.ts";
import { sendEvmTransfer } from "./evm-transfer.ts";

/** What the EVM adapter is built from: one live EVM chain's settings, the sealed signers, and the worker's environment (its bindings). */
export type EvmLivePortOptions = {
  settings: LiveChainSettings;
  signers: SignerSource;
  env: LiveChainEnv & Record<string, unknown>;
  /** The senders' nonce books; default: the `EVM_SENDERS` Durable Object binding of `env` (the Bun tier passes `memoryEvmSenders()`). */
  senders?: EvmSenders;
  /** Default: `http(settings.rpcUrl)`; tests wrap it to inject node errors. */
  transport?: Transport;
  /** Default: `<CHAIN>_REPLACE_AFTER_SECONDS` of `env`, else 180 s (a minute and a half of Polygon or Base blocks). */
  replaceAfterMs?: number;
};

const DEFAULT_REPLACE_AFTER_SECONDS = 180;

function replaceAfterMsOf({ settings, env, replaceAfterMs }: EvmLivePortOptions): number {
  if (replaceAfterMs !== undefined) return replaceAfterMs;
  const raw = env[`${settings.chain}_REPLACE_AFTER_SECONDS`];
  const seconds = typeof raw === "string" && raw !== "" ? Number(raw) : DEFAULT_REPLACE_AFTER_SECONDS;
  if (!Number.isFinite(seconds) || seconds <= 0) throw new RangeError(`${settings.chain}_REPLACE_AFTER_SECONDS must be a positive number, not ${raw}`);
  return seconds * 1000;
}

function sendersOf({ senders, env }: EvmLivePortOptions): EvmSenders | null {
  if (senders) return senders;
  const namespace = env.EVM_SENDERS as DurableObjectNamespace<EvmSenderObject> | undefined;
  return namespace ? durableEvmSenders(namespace) : null;
}

/**
 * The live EVM adapter (POLYGON, BASE) through viem over the chain's RPC.
 * Funding is an ERC-20 `transfer` of the chain's token from the tenant's
 * DISBURSEMENT wallet, signed here with its installed signer, its nonce
 * taken from the sender's book (`EvmSenderObject`), and counted once
 * `settings.confirmations` blocks deep (evm-transfer.ts). Balances are the
 * token's `balanceOf` and the native balance; contract signatures are judged
 * by the chain (contract-signatures.ts). Before its first call the RPC must
 * report the chain's id, so a misconfigured URL never signs or reads for
 * another chain.
 *
 * @example const port = evmLivePort({ settings: liveChainSettings(env).POLYGON!, signers, env })
 */
export function evmLivePort(options: EvmLivePortOptions): ChainPort {
  const { settings, signers } = options;
  const transport = options.transport ?? http(settings.rpcUrl, { retryCount: 1, timeout: 20_000 });
  const senders = sendersOf(options);
  const replaceAfterMs = replaceAfterMsOf(options);
  const expectedChainId = chainConfig(settings.chain).chainId;
  // No cache: the head block decides confirmations, and viem would otherwise answer it from a 4 s cache.
  const plain = createPublicClient({ transport, cacheTime: 0 }) as PublicClient;
  let checked: Promise<PublicClient> | null = null;
  const client = (): Promise<PublicClient> => {
    checked ??= plain.getChainId().then((id) => {
      if (id !== expectedChainId) throw new WrongChainError(`the RPC for ${settings.chain} reports chain id ${id}, not ${expectedChainId}`);
      return plain;
    });
    // A failed check (RPC down, wrong chain) is asked again next time.
    checked.catch(() => {
      checked = null;
    });
    return checked;
  };
  const signatures = evmContractSignatures({ [settings.chain]: transport });

  return {
    async transfer(input): Promise<TransferResult> {
      if (!senders) {
        return {
          success: false,
          errorReason: `live ${settings.chain} funding needs the EVM_SENDERS binding (EvmSenderObject), which this worker lacks`,
          txHash: null,
        };
      }
      return sendEvmTransfer({ settings, client, signers, senders, replaceAfterMs }, input);
    },
    readTransactions: async () => {
      throw new RangeError(`${settings.chain} transactions are not read by this adapter (the EVM log reader reads them)`);
    },
    verifyContractSignature: signatures.verifyContractSignature,
    async balances(chain, address) {
      if (chain !== settings.chain || !isAddress(address, { strict: false })) return null;
      const c = await client();
      const owner = getAddress(address);
      const [stablecoin, native] = await Promise.all([
        c.readContract({ address: settings.tokenAddress as Address, abi: erc20Abi, functionName: "balanceOf", args: [owner] }),
        c.getBalance({ address: owner }),
      ]);
      return { stablecoin, native };
    },
  };
}
