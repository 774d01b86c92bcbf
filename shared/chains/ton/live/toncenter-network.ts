import { TonClient } from "@ton/ton";
import type { TonNetwork } from "../ton-network.ts";

/**
 * The production TonNetwork: toncenter's HTTP API v2 (`jsonRPC` endpoint,
 * `settings.rpcUrl`, with its API key) through @ton/ton's TonClient.
 */
export function toncenterNetwork({ rpcUrl, apiKey }: { rpcUrl: string; apiKey: string | null }): TonNetwork {
  const client = new TonClient({ endpoint: rpcUrl, apiKey: apiKey ?? undefined, timeout: 15_000 });
  return {
    async runGetMethod(address, method, args = []) {
      return (await client.runMethod(address, method, args)).stack;
    },
    async sendExternal(message) {
      await client.sendFile(message.toBoc());
    },
    async account(address) {
      const state = await client.getContractState(address);
      // toncenter says "uninitialized" both for a never-seen account and for one holding TON without code.
      const kind = state.state === "active" ? "active" : state.state === "frozen" ? "frozen" : state.lastTransaction ? "uninit" : "nonexist";
      return { state: kind, balance: state.balance };
    },
    async transactions(address, { limit, lt, hash }) {
      const cursor = lt !== undefined && hash ? { lt: lt.toString(), hash: hash.toString("base64"), inclusive: true } : {};
      return client.getTransactions(address, { limit, archival: true, ...cursor });
    },
  };
}
