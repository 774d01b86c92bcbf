/**
 * Smart-contract wallet signatures on EVM chains (ERC-1271 and ERC-6492),
 * judged by the chain itself through a viem public client. The live EVM
 * adapter will offer this as its `ChainPort.verifyContractSignature` with an
 * `http(rpcUrl)` transport per chain; nothing wires it yet (there are no RPC
 * URLs in this repo), and the simulated sandbox chains execute no contracts.
 */
import { createPublicClient, getAddress, isAddress, isHex, type PublicClient, type Transport } from "viem";
import type { Chain } from "../../domain/rails.ts";
import { chainConfig } from "../chain-config.ts";
import type { ChainPort, ContractSignatureInput } from "../chain-port.ts";

/**
 * The `verifyContractSignature` capability over one viem transport per EVM
 * chain (`http(rpcUrl)` live; any EIP-1193 `custom` transport in tests).
 * viem's `verifyMessage` sends one `eth_call` of the deployless universal
 * validator (ERC-6492), which deploys a counterfactual wallet inside the call
 * when the signature is 6492-wrapped, then asks `isValidSignature` (ERC-1271)
 * of a contract or ecrecovers for an EOA. A chain without a transport
 * answers false. Before its first check on a chain, the RPC's `eth_chainId`
 * must be that chain's (CHAIN_CONFIG), so a misconfigured URL never judges a
 * signature on another chain, where the same address may have other owners.
 * Throws when the RPC cannot be reached, so callers answer 5xx rather than
 * calling a good signature bad.
 *
 * @example const port = evmContractSignatures({ POLYGON: http(rpcUrl) }); await port.verifyContractSignature("POLYGON", { address, message, signature })
 */
export function evmContractSignatures(transports: Partial<Record<Chain, Transport>>): Required<Pick<ChainPort, "verifyContractSignature">> {
  const clients = new Map<Chain, Promise<PublicClient>>();

  function clientFor(chain: Chain, transport: Transport): Promise<PublicClient> {
    let client = clients.get(chain);
    if (!client) {
      client = (async () => {
        const c = createPublicClient({ transport });
        const expected = chainConfig(chain).chainId;
        const actual = await c.getChainId();
        if (actual !== expected) throw new Error(`the RPC for ${chain} reports chain id ${actual}, not ${expected}`);
        return c;
      })();
      // A failed check (RPC down, wrong chain) is asked again next time.
      client.catch(() => clients.delete(chain));
      clients.set(chain, client);
    }
    return client;
  }

  return {
    async verifyContractSignature(chain: Chain, input: ContractSignatureInput): Promise<boolean> {
      const transport = transports[chain];
      if (!transport || chainConfig(chain).family !== "EVM") return false;
      if (!isAddress(input.address, { strict: false }) || !isHex(input.signature, { strict: true })) return false;
      const client = await clientFor(chain, transport);
      if (await client.verifyMessage({ address: getAddress(input.address), message: input.message, signature: input.signature })) return true;
      // viem answers false for a failed eth_call too, RPC down included; a rejection is only believed
      // from a node that answers (uncached), so an outage surfaces as an error, not as a bad signature.
      await client.request({ method: "eth_blockNumber" });
      return false;
    },
  };
}
