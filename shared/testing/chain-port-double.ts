import type { ChainPort, TransferRequest, TransferResult, WalletBalances } from "../chains/chain-port.ts";
import { isSandboxChain, type Chain } from "../domain/rails.ts";

/**
 * A live chain that answers, for tests only, until the next issue's adapters
 * exist (issue 12, item 7): in-memory balances per (chain, address), and
 * transfers on live chains moved between those balances and recorded.
 * Sandbox chains, and everything else the port does, go to `base` (the
 * simulated chains), so one port serves a whole test app.
 *
 * @example
 * const chain = chainPortDouble(app.deps.chain);
 * app.deps.chain = chain;
 * chain.setBalances("POLYGON", address, { stablecoin: 5_000_000n, native: 10n ** 18n });
 */
export function chainPortDouble(base: ChainPort) {
  const held = new Map<string, WalletBalances>();
  const key = (chain: Chain, address: string) => `${chain}:${address.toLowerCase()}`;
  const transfers: (TransferRequest & { result: TransferResult })[] = [];
  let counter = 0;

  const port: ChainPort & {
    setBalances(chain: Chain, address: string, balances: Partial<WalletBalances>): void;
    transfers: typeof transfers;
    balanceReads: number;
  } = {
    ...base,
    balanceReads: 0,
    transfers,
    setBalances(chain, address, balances) {
      const now = held.get(key(chain, address)) ?? { stablecoin: 0n, native: 0n };
      held.set(key(chain, address), { ...now, ...balances });
    },
    async balances(chain, address) {
      port.balanceReads++;
      if (isSandboxChain(chain)) return null;
      return held.get(key(chain, address)) ?? { stablecoin: 0n, native: 0n };
    },
    async transfer(input) {
      if (isSandboxChain(input.chain)) return base.transfer(input);
      const earlier = transfers.find((t) => t.reference === input.reference);
      if (earlier) return earlier.result;
      // As the live adapters: a sender that may make no new attempt only answers for one in flight.
      if (input.followOnly) return { success: false, errorReason: "no transfer in flight for this reference", txHash: null };
      const from = held.get(key(input.chain, input.from)) ?? { stablecoin: 0n, native: 0n };
      let result: TransferResult;
      if (from.stablecoin < input.amount) result = { success: false, errorReason: "insufficient stablecoin balance", txHash: null };
      else {
        const to = held.get(key(input.chain, input.to)) ?? { stablecoin: 0n, native: 0n };
        held.set(key(input.chain, input.from), { ...from, stablecoin: from.stablecoin - input.amount });
        held.set(key(input.chain, input.to), { ...to, stablecoin: to.stablecoin + input.amount });
        result = { success: true, txHash: `0x${(++counter).toString(16).padStart(64, "0")}`, blockNumber: counter, confirmedAt: input.now };
      }
      transfers.push({ ...input, result });
      return result;
    },
  };
  return port;
}

export type ChainPortDouble = ReturnType<typeof chainPortDouble>;
