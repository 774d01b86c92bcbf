import { TonClient } from "@ton/ton";
import type { TonNetwork } from "../ton-network.ts";

type HttpAdapter = NonNullable<ConstructorParameters<typeof TonClient>[0]["httpAdapter"]>;

/**
 * TonClient's HTTP through `fetch`: axios would otherwise pick its XHR or
 * Node `http` adapter, neither of which a Worker has. Axios still serializes
 * the request and parses the JSON answer; a non-200 answer is returned as is
 * and TonClient turns it into an error.
 */
export const fetchAdapter: HttpAdapter = async (config) => {
  const headers = new Headers();
  const given = (config.headers?.toJSON?.() ?? {}) as Record<string, unknown>;
  for (const [name, value] of Object.entries(given)) if (value !== undefined && value !== null && value !== false) headers.set(name, String(value));
  const response = await fetch(String(config.url), {
    method: (config.method ?? "get").toUpperCase(),
    headers,
    body: config.data as string | undefined,
    signal: config.timeout ? AbortSignal.timeout(config.timeout) : undefined,
  });
  const data = await response.text();
  return { data, status: response.status, statusText: response.statusText, headers: Object.fromEntries(response.headers), config, request: null } as Awaited<
    ReturnType<HttpAdapter>
  >;
};

/**
 * The production TonNetwork: toncenter's HTTP API v2 (`jsonRPC` endpoint,
 * `settings.rpcUrl`, with its API key) through @ton/ton's TonClient.
 */
export function toncenterNetwork({ rpcUrl, apiKey }: { rpcUrl: string; apiKey: string | null }): TonNetwork {
  const client = new TonClient({ endpoint: rpcUrl, apiKey: apiKey ?? undefined, timeout: 15_000, httpAdapter: fetchAdapter });
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
