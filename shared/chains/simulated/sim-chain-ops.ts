import type { ChainTransaction } from "../chain-port.ts";

// The inputs, results and operations of one simulated chain: the contract the
// engine, its Durable Object and the Bun tier share (sim-chain-engine.ts
// implements it from the concern modules beside it).

/**
 * When a write happens on the ledger's clock. A sandbox tenant's ledger runs
 * on that tenant's sandbox clock (system time + the offset that
 * `POST /v1/sandbox/clock/advance` moves), so the service's writes (the
 * sandbox helpers, funding) name the tenant's time of the call, and the
 * block is stamped with it: the listener then reads the time the transfer
 * was made on the loan's clock, however far the clock moved before it polls.
 * Without `at` (a test writing straight onto a ledger) the engine's own clock
 * stamps it. A block's time never runs backwards.
 */
export type LedgerTime = { at?: Date };

export type SimFaucetInput = {
  address: string;
  amount: bigint;
  /** TON and Solana: the jetton master or mint to credit (default the chain's stablecoin). EVM: only the stablecoin. */
  token?: string;
  sandboxTenantId?: string | null;
} & LedgerTime;
export type SimFaucetResult = { txHash: string; blockNumber: number };

/**
 * `requireFundedSender`: refuse a sender that has never held the token on this
 * ledger (as a node refuses an account without funds for gas). The sandbox
 * helpers set it: a tenant moves only wallets of its own sandbox ledger.
 */
type SenderRule = { requireFundedSender?: boolean };

export type SimEvmSubmitInput = { serializedTransaction: string; sandboxTenantId?: string | null } & SenderRule & LedgerTime;
export type SimEvmSubmitResult = {
  txHash: string;
  status: "success" | "reverted";
  blockNumber: number;
  /** The sender recovered from the signature. */
  from: string;
  revertReason: string | null;
};

export type SimTransferInput = {
  from: string;
  to: string;
  amount: bigint;
  /** TON text comment or Solana memo. */
  comment?: string | null;
  /** The jetton master or mint (default the chain's stablecoin). */
  token?: string;
  sandboxTenantId?: string | null;
} & SenderRule &
  LedgerTime;
export type SimTransferResult = { txHash: string; status: "success" | "failed"; blockNumber: number; failureReason: string | null };

export type SimEmitLogInput = { address: string; topics: string[]; data: string; from: string; sandboxTenantId?: string | null } & LedgerTime;
export type SimEmitLogResult = { txHash: string; blockNumber: number };

export type SimFundInput = { loanId: string; to: string; amount: bigint; reference: string } & LedgerTime;
export type SimFundResult = {
  txHash: string;
  status: "success" | "reverted" | "failed";
  blockNumber: number;
  /** Block time, unix seconds (on the ledger's clock: see LedgerTime). */
  timestamp: number;
  failureReason: string | null;
};

export type SimReadResult = { transactions: ChainTransaction[]; head: number };

export type SimTxKind = "faucet" | "evm" | "transfer" | "impostor" | "fund";

/** A transaction as stored: what the listener reads, plus why it failed and where it came from. */
export type SimTransaction = ChainTransaction & { kind: SimTxKind; failureReason: string | null };

/** The operations of one simulated chain, as the engine, the Durable Object and the Bun tier offer them. */
export interface SimChainOps {
  /** Mints test stablecoin to `address` (EVM: a Transfer log from 0x0). */
  faucet(input: SimFaucetInput): Promise<SimFaucetResult>;
  /** Includes a signed EVM transaction and executes it; throws SimChainRejected when no node would accept it. */
  submitEvmTransaction(input: SimEvmSubmitInput): Promise<SimEvmSubmitResult>;
  /** TON and Solana: a jetton or SPL transfer with its comment or memo; an uncovered one is included as "failed". */
  transferToken(input: SimTransferInput): Promise<SimTransferResult>;
  /** EVM: a successful transaction whose only log comes from `address`, a contract that is not ours (spoofing tests). */
  emitLogAs(input: SimEmitLogInput): Promise<SimEmitLogResult>;
  /** The platform sends principal from the pool; idempotent by `reference` once it succeeded. */
  fundFromPool(input: SimFundInput): Promise<SimFundResult>;
  /** Transactions in blocks after `afterBlock` (exclusive), oldest first, at most `limit` (capped at SIM_READ_LIMIT); and the head. */
  readTransactions(afterBlock: number, limit: number): Promise<SimReadResult>;
  /** The latest block number (0 before the first transaction). */
  head(): Promise<number>;
  getTransaction(hash: string): Promise<SimTransaction | null>;
  balanceOf(address: string, token?: string): Promise<bigint>;
  /** EVM: the stablecoin allowance `owner` gave `spender`. */
  allowance(owner: string, spender: string): Promise<bigint>;
  /** EVM: the nonce the next transaction from `address` must carry. */
  nonceOf(address: string): Promise<number>;
}
