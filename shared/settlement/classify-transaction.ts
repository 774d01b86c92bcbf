import { decodeEventLog, decodeFunctionData, erc20Abi, getAddress, isAddressEqual } from "viem";
import type { ChainTransaction, EvmLog } from "../chains/chain-port.ts";
import { chainConfig } from "../chains/chain-config.ts";
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

/**
 * What a transaction means for settlement (issue 5, "The settlement
 * listener"); everything else is ignored:
 * - EVM: a `Repaid` log of our pool contract in a successful transaction,
 *   backed in the same transaction by a transfer of the canonical token from
 *   the payer to the pool for the same amount. A log of any other contract, or
 *   a Repaid without the matching token transfer, counts for nothing. A
 *   reverted call of the pool's `repay` is a failed repayment. A plain
 *   transfer of the canonical token to the pool with no `Repaid` for it is
 *   money received all the same: a payment naming no loan (kept as unmatched,
 *   DECISIONS.md "no received payment is ever dropped").
 * - TON / Solana: a transfer of the chain's stablecoin to the platform
 *   settlement wallet; the loan comes from the exact comment/memo
 *   `svc:repay:<loanId>` (null when missing or wrong: unmatched). A failed
 *   such transfer naming a loan is a failed repayment. Other tokens, other
 *   recipients: ignored.
 */
export function classifyTransaction(tx: ChainTransaction): Observation[] {
  const config = chainConfig(tx.chain);
  const base = { chain: tx.chain, txHash: tx.hash, blockNumber: tx.blockNumber, timestamp: tx.timestamp, sandboxTenantId: tx.sandboxTenantId ?? null };
  if (tx.family === "EVM") {
    if (!config.pool) return [];
    const pool = config.pool;
    if (tx.status === "reverted") {
      if (!same(tx.to, pool)) return [];
      try {
        const call = decodeFunctionData({ abi: SVC_POOL_ABI, data: tx.input as `0x${string}` });
        if (call.functionName !== "repay") return [];
        const [loanIdBytes, amount] = call.args as readonly [`0x${string}`, bigint];
        return [
          {
            ...base,
            kind: "failed",
            logIndex: 0,
            from: tx.from,
            to: pool,
            token: config.token.address,
            amount,
            loanId: bytes32ToLoanId(loanIdBytes),
            comment: null,
          },
        ];
      } catch {
        return [];
      }
    }
    const toPool = tx.logs
      .filter((l) => same(l.address, config.token.address))
      .map((l) => ({ log: l, transfer: decodeTransfer(l) }))
      .filter((x): x is { log: EvmLog; transfer: NonNullable<ReturnType<typeof decodeTransfer>> } => x.transfer != null && same(x.transfer.to, pool));
    const backing = new Set<number>();
    const repayments = tx.logs.flatMap((log) => {
      if (!same(log.address, pool)) return [];
      const repaid = decodeRepaid(log);
      if (!repaid) return [];
      const match = toPool.find((x) => !backing.has(x.log.logIndex) && same(x.transfer.from, repaid.payer) && x.transfer.value === repaid.amount);
      if (!match) return [];
      backing.add(match.log.logIndex);
      return [
        {
          ...base,
          kind: "payment" as const,
          logIndex: log.logIndex,
          from: getAddress(repaid.payer),
          to: pool,
          token: config.token.address,
          amount: repaid.amount,
          loanId: bytes32ToLoanId(repaid.loanId),
          comment: null,
        },
      ];
    });
    const plain = toPool
      .filter((x) => !backing.has(x.log.logIndex) && x.transfer.value > 0n)
      .map((x) => ({
        ...base,
        kind: "payment" as const,
        logIndex: x.log.logIndex,
        from: getAddress(x.transfer.from),
        to: pool,
        token: config.token.address,
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
