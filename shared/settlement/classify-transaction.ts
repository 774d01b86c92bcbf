import { decodeEventLog, decodeFunctionData, erc20Abi, getAddress, isAddressEqual } from "viem";
import type { ChainTransaction, EvmLog } from "../chains/chain-port.ts";
import { chainConfig, type ChainConfig } from "../chains/chain-config.ts";
import { SVC_POOL_ABI } from "../chains/evm/svc-pool-abi.ts";
import { bytes32ToLoanId } from "../chains/loan-id.ts";
import { parseRepaymentComment } from "../chains/repayment-instructions.ts";

/** A payment (or a failed one) the listener found, before it looks for the loan. */
export type Observation = {
  kind: "payment" | "failed";
  chain: ChainTransaction["chain"];
  txHash: string;
  /** The log (EVM) or 0 (one transfer per transaction elsewhere): with the hash, the payment's identity. */
  logIndex: number;
  blockNumber: number;
  /** The block's time, unix seconds. */
  timestamp: number;
  from: string;
  to: string;
  token: string;
  amount: bigint;
  /** The loan the payment names (the Repaid log's loanId, or the comment), or null. */
  loanId: string | null;
  comment: string | null;
  sandboxTenantId: string | null;
};

const same = (a: string | null | undefined, b: string | null | undefined) =>
  !!a && !!b && (a.startsWith("0x") && b.startsWith("0x") ? isAddressEqual(a as `0x${string}`, b as `0x${string}`) : a === b);

function decodeRepaid(log: EvmLog) {
  try {
    const e = decodeEventLog({ abi: SVC_POOL_ABI, topics: log.topics as [`0x${string}`], data: log.data as `0x${string}` });
    return e.eventName === "Repaid" ? e.args : null;
  } catch {
    return null;
  }
}

function decodeTransfer(log: EvmLog) {
  try {
    const e = decodeEventLog({ abi: erc20Abi, topics: log.topics as [`0x${string}`], data: log.data as `0x${string}` });
    return e.eventName === "Transfer" ? e.args : null;
  } catch {
    return null;
  }
}

/** What the classification of a chain needs besides the transaction itself. */
export type ClassifyOptions = {
  /** The chain as this deployment configures it (effectiveChainConfig: its token and pool); CHAIN_CONFIG's entry when absent. */
  config?: ChainConfig;
  /**
   * Live EVM chains: every verified COLLECTIONS address of the chain
   * (lowercase), where repayments land. Sandbox EVM chains ignore it: their
   * repayment instructions name the simulated pool itself as collections.
   */
  collections?: ReadonlySet<string>;
};

/** The addresses whose incoming token transfers are payments on this chain: the pool (sandbox) or the COLLECTIONS wallets (live). */
function receiversOf(config: ChainConfig, options: ClassifyOptions): ReadonlySet<string> {
  if (config.simulated) return new Set(config.pool ? [config.pool.toLowerCase()] : []);
  return options.collections ?? new Set();
}

/**
 * What a transaction means for settlement (issue 5, "The settlement
 * listener"; issue 13 for the non-custodial pool); everything else is ignored:
 * - EVM: a `Repaid(loanId, payer, collections, amount)` log of our pool
 *   contract (the configured address) in a successful transaction, backed in
 *   the same transaction by a Transfer of the configured token from the payer
 *   to `collections` for the same amount, where `collections` is one of the
 *   chain's receiving addresses (sandbox: the pool itself; live: a verified
 *   COLLECTIONS wallet, and the listener then requires it to be the loan's
 *   own tenant's). A log of any other contract, a Repaid without the matching
 *   transfer, or one paying elsewhere counts for nothing. A reverted call of
 *   the pool's `repay` to a receiving address is a failed repayment. A plain
 *   transfer of the token to a receiving address with no `Repaid` for it is
 *   money received all the same: a payment naming no loan (kept as unmatched,
 *   DECISIONS.md "no received payment is ever dropped").
 * - TON / Solana: a transfer of the chain's stablecoin to the platform
 *   settlement wallet; the loan comes from the exact comment/memo
 *   `svc:repay:<loanId>` (null when missing or wrong: unmatched). A failed
 *   such transfer naming a loan is a failed repayment. Other tokens, other
 *   recipients: ignored.
 */
export function classifyTransaction(tx: ChainTransaction, options: ClassifyOptions = {}): Observation[] {
  const config = options.config ?? chainConfig(tx.chain);
  const base = { chain: tx.chain, txHash: tx.hash, blockNumber: tx.blockNumber, timestamp: tx.timestamp, sandboxTenantId: tx.sandboxTenantId ?? null };
  if (tx.family === "EVM") {
    if (!config.pool) return [];
    const pool = config.pool;
    const token = getAddress(config.token.address);
    const receivers = receiversOf(config, options);
    const receives = (address: string) => receivers.has(address.toLowerCase());
    if (tx.status === "reverted") {
      if (!same(tx.to, pool)) return [];
      try {
        const call = decodeFunctionData({ abi: SVC_POOL_ABI, data: tx.input as `0x${string}` });
        if (call.functionName !== "repay") return [];
        const [loanIdBytes, collections, amount] = call.args;
        if (!receives(collections)) return [];
        return [
          {
            ...base,
            kind: "failed",
            logIndex: 0,
            from: tx.from,
            to: getAddress(collections),
            token,
            amount,
            loanId: bytes32ToLoanId(loanIdBytes),
            comment: null,
          },
        ];
      } catch {
        return [];
      }
    }
    const received = tx.logs
      .filter((l) => same(l.address, token))
      .map((l) => ({ log: l, transfer: decodeTransfer(l) }))
      .filter((x): x is { log: EvmLog; transfer: NonNullable<ReturnType<typeof decodeTransfer>> } => x.transfer != null && receives(x.transfer.to));
    const backing = new Set<number>();
    const repayments = tx.logs.flatMap((log) => {
      if (!same(log.address, pool)) return [];
      const repaid = decodeRepaid(log);
      if (!repaid || !receives(repaid.collections)) return [];
      const match = received.find(
        (x) =>
          !backing.has(x.log.logIndex) && same(x.transfer.from, repaid.payer) && same(x.transfer.to, repaid.collections) && x.transfer.value === repaid.amount,
      );
      if (!match) return [];
      backing.add(match.log.logIndex);
      return [
        {
          ...base,
          kind: "payment" as const,
          logIndex: log.logIndex,
          from: getAddress(repaid.payer),
          to: getAddress(repaid.collections),
          token,
          amount: repaid.amount,
          loanId: bytes32ToLoanId(repaid.loanId),
          comment: null,
        },
      ];
    });
    const plain = received
      .filter((x) => !backing.has(x.log.logIndex) && x.transfer.value > 0n)
      .map((x) => ({
        ...base,
        kind: "payment" as const,
        logIndex: x.log.logIndex,
        from: getAddress(x.transfer.from),
        to: getAddress(x.transfer.to),
        token,
        amount: x.transfer.value,
        loanId: null,
        comment: null,
      }));
    return [...repayments, ...plain];
  }
  if (!config.settlementWallet || tx.to !== config.settlementWallet || tx.token !== config.token.address) return [];
  const loanId = parseRepaymentComment(tx.comment);
  if (tx.status !== "success") {
    return loanId ? [{ ...base, kind: "failed", logIndex: 0, from: tx.from, to: tx.to, token: tx.token, amount: tx.amount, loanId, comment: tx.comment }] : [];
  }
  return [{ ...base, kind: "payment", logIndex: 0, from: tx.from, to: tx.to, token: tx.token, amount: tx.amount, loanId, comment: tx.comment }];
}
