import { randomUUID } from "node:crypto";
import type { BrowserContext } from "playwright-core";
import { isAddressEqual, isHex, keccak256, toHex, type Hex, type PrivateKeyAccount } from "viem";

/**
 * A scripted EIP-1193 wallet for Playwright: every frame of every page of a
 * context (cross-origin iframes included) gets `window.ethereum` and an
 * EIP-6963 announcement, and each request runs here in the test process
 * against a viem account, as a browser extension would in its own process.
 */
export type InjectedWalletOptions = {
  account: PrivateKeyAccount;
  chainId: number;
  /** Broadcasts a signed transaction (e.g. to a fake chain); returns its hash. */
  sendRawTransaction: (serialized: Hex) => Promise<Hex>;
};

export type WalletCall = {
  method: string;
  params: unknown;
  /** The origin of the frame that made the request, e.g. the widget's. */
  origin: string;
};

export type InjectedWallet = {
  /** Every request, in arrival order, answered or not. */
  calls: WalletCall[];
};

/** EIP-6963 `info`: `rdns` identifies the wallet to dapps. */
export const TEST_WALLET_INFO = {
  name: "Test Wallet",
  rdns: "dev.svc.testwallet",
  icon: "data:image/svg+xml,%3Csvg%20xmlns='http://www.w3.org/2000/svg'%20viewBox='0%200%2096%2096'%3E%3Crect%20width='96'%20height='96'%20rx='20'%20fill='%234f46e5'/%3E%3C/svg%3E",
} as const;

const BINDING = "__svcTestWalletRequest";

type Reply = { result: unknown; events?: [string, unknown][] } | { error: { code: number; message: string } };

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Installs the wallet into `context`; call before opening pages. Supports
 * eth_requestAccounts, eth_accounts, eth_chainId, net_version,
 * wallet_switchEthereumChain (to `chainId` only, else 4902),
 * wallet_addEthereumChain, personal_sign, eth_sendTransaction (EIP-1559,
 * nonces from 0, signed here and handed to `sendRawTransaction`),
 * eth_getTransactionReceipt and eth_blockNumber; anything else rejects with
 * code 4200. Errors reach the page as rejected promises of Errors with `code`.
 *
 * @example
 * const wallet = await installInjectedWallet(context, { account, chainId: 8453, sendRawTransaction: async (tx) => keccak256(tx) });
 * await page.goto(merchant.origin);
 * expect(wallet.calls.map((c) => c.method)).toContain("personal_sign");
 */
export async function installInjectedWallet(context: BrowserContext, opts: InjectedWalletOptions): Promise<InjectedWallet> {
  const { account, chainId } = opts;
  const calls: WalletCall[] = [];
  const sent: { hash: Hex; from: Hex; to: Hex | null; block: number }[] = [];
  let nonce = 0;

  const checkAccount = (address: unknown) => {
    if (typeof address !== "string" || !isHex(address) || !isAddressEqual(address, account.address)) {
      throw new RpcError(4100, `Unauthorized account: ${String(address)}`);
    }
  };

  async function handle(method: string, params: unknown): Promise<{ result: unknown; events?: [string, unknown][] }> {
    const args = Array.isArray(params) ? params : [];
    switch (method) {
      case "eth_requestAccounts":
        return { result: [account.address], events: [["accountsChanged", [account.address]]] };
      case "eth_accounts":
        return { result: [account.address] };
      case "eth_chainId":
        return { result: toHex(chainId) };
      case "net_version":
        return { result: String(chainId) };
      case "wallet_switchEthereumChain": {
        const wanted = (args[0] as { chainId?: unknown } | undefined)?.chainId;
        if (typeof wanted !== "string" || !isHex(wanted) || Number(BigInt(wanted)) !== chainId) {
          throw new RpcError(4902, `Unrecognized chain ID ${String(wanted)}; this wallet only knows ${toHex(chainId)}`);
        }
        return { result: null, events: [["chainChanged", toHex(chainId)]] };
      }
      case "wallet_addEthereumChain":
        return { result: null };
      case "personal_sign": {
        const [message, address] = args;
        checkAccount(address);
        if (typeof message !== "string") throw new RpcError(-32602, "personal_sign: message must be a string");
        return { result: await account.signMessage({ message: isHex(message) ? { raw: message } : message }) };
      }
      case "eth_sendTransaction": {
        const tx = (args[0] ?? {}) as { from?: unknown; to?: Hex | null; data?: Hex; value?: Hex | string; gas?: Hex | string };
        if (tx.from !== undefined) checkAccount(tx.from);
        const serialized = await account.signTransaction({
          chainId,
          nonce: nonce++,
          to: tx.to ?? null,
          data: tx.data,
          value: tx.value ? BigInt(tx.value) : 0n,
          gas: tx.gas ? BigInt(tx.gas) : 300_000n,
          maxFeePerGas: 1n,
          maxPriorityFeePerGas: 1n,
          type: "eip1559",
        });
        const hash = await opts.sendRawTransaction(serialized);
        sent.push({ hash, from: account.address, to: tx.to ?? null, block: sent.length + 1 });
        return { result: hash };
      }
      case "eth_blockNumber":
        return { result: toHex(sent.length + 1) };
      case "eth_getTransactionReceipt": {
        const tx = sent.find((s) => typeof args[0] === "string" && s.hash.toLowerCase() === args[0].toLowerCase());
        if (!tx) return { result: null };
        const blockNumber = toHex(tx.block);
        return {
          result: {
            transactionHash: tx.hash,
            transactionIndex: "0x0",
            blockHash: keccak256(blockNumber),
            blockNumber,
            from: tx.from,
            to: tx.to,
            contractAddress: null,
            status: "0x1",
            type: "0x2",
            gasUsed: "0x5208",
            cumulativeGasUsed: "0x5208",
            effectiveGasPrice: "0x1",
            logs: [],
            logsBloom: `0x${"00".repeat(256)}`,
          },
        };
      }
      default:
        throw new RpcError(4200, `Unsupported method: ${method}`);
    }
  }

  // Never throws across the binding: the reply carries the error, so its code survives intact.
  await context.exposeBinding(BINDING, async (source, request: { method: string; params: unknown }): Promise<Reply> => {
    calls.push({ method: request.method, params: request.params, origin: originOf(source.frame.url()) });
    try {
      return await handle(request.method, request.params);
    } catch (e) {
      if (e instanceof RpcError) return { error: { code: e.code, message: e.message } };
      return { error: { code: -32603, message: e instanceof Error ? e.message : String(e) } };
    }
  });
  await context.addInitScript(injectProvider, { binding: BINDING, info: { uuid: randomUUID(), ...TEST_WALLET_INFO } });
  return { calls };
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/** Runs in each frame before its scripts (serialized by Playwright: no closures, no DOM types). */
function injectProvider(cfg: { binding: string; info: { uuid: string; name: string; icon: string; rdns: string } }): void {
  const g = globalThis as any;
  if (g.__svcTestWallet) return;
  const listeners = new Map<string, Set<(...args: any[]) => void>>();
  const rpcError = (code: number, message: string) => Object.assign(new Error(message), { code });
  const provider = {
    isTestWallet: true,
    async request(args: { method: string; params?: unknown }): Promise<unknown> {
      if (!args || typeof args.method !== "string") throw rpcError(-32600, "Invalid request: expected { method, params }");
      let reply: any;
      try {
        reply = await g[cfg.binding]({ method: args.method, params: args.params });
      } catch (e: any) {
        throw rpcError(-32603, String(e?.message ?? e));
      }
      if (reply.error) throw rpcError(reply.error.code, reply.error.message);
      for (const [event, value] of reply.events ?? []) provider.emit(event, value);
      return reply.result;
    },
    on(event: string, listener: (...args: any[]) => void) {
      if (!listeners.has(event)) listeners.set(event, new Set());
      listeners.get(event)!.add(listener);
      return provider;
    },
    removeListener(event: string, listener: (...args: any[]) => void) {
      listeners.get(event)?.delete(listener);
      return provider;
    },
    emit(event: string, ...args: unknown[]) {
      for (const listener of [...(listeners.get(event) ?? [])]) {
        try {
          listener(...args);
        } catch (e) {
          console.error(e);
        }
      }
    },
  };
  g.__svcTestWallet = provider;
  g.ethereum = provider;
  const detail = Object.freeze({ info: Object.freeze({ ...cfg.info }), provider });
  const announce = () => g.dispatchEvent(new g.CustomEvent("eip6963:announceProvider", { detail }));
  g.addEventListener("eip6963:requestProvider", announce);
  announce();
}
