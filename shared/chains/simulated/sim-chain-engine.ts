import {
  decodeFunctionData,
  encodeAbiParameters,
  encodeEventTopics,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  isHex,
  keccak256,
  maxUint256,
  parseAbi,
  parseTransaction,
  recoverTransactionAddress,
  toHex,
  zeroAddress,
  type Address,
  type Hex,
  type TransactionSerialized,
} from "viem";
import { canonicalAddress } from "../../domain/addresses.ts";
import type { Clock } from "../../domain/clock.ts";
import type { Chain } from "../../domain/rails.ts";
import { CHAIN_CONFIG, SIMULATED_OPERATOR, type ChainConfig } from "../chain-config.ts";
import type { ChainTransaction, EvmLog } from "../chain-port.ts";
import { SVC_POOL_ABI } from "../evm/svc-pool-abi.ts";
import { loanIdToBytes32 } from "../loan-id.ts";
import { SimChainRejected } from "./sim-chain-rejected.ts";
import type { SimStorage } from "./sim-storage.ts";

/**
 * What the pool (EVM) or the settlement wallet (TON, Solana) holds before
 * anything happened: a genesis allocation, not a transaction, so no listener
 * ever sees it as a payment. 10^15 units = 10^9 of the stablecoin.
 */
export const SIM_POOL_GENESIS_BALANCE = 10n ** 15n;

/** The account that sends the faucet's `mint` calls on the simulated EVM chains. */
export const SIM_FAUCET_MINTER: Address = getAddress("0x00000000000000000000000000000000000fa0c7");

/** At most this many transactions per `readTransactions` call. */
export const SIM_READ_LIMIT = 1000;

export type SimFaucetInput = {
  address: string;
  amount: bigint;
  /** TON and Solana: the jetton master or mint to credit (default the chain's stablecoin). EVM: only the stablecoin. */
  token?: string;
  sandboxTenantId?: string | null;
};
export type SimFaucetResult = { txHash: string; blockNumber: number };

/**
 * `requireFundedSender`: refuse a sender that has never held the token on this
 * ledger (as a node refuses an account without funds for gas). The sandbox
 * helpers set it: a tenant moves only wallets of its own sandbox ledger.
 */
type SenderRule = { requireFundedSender?: boolean };

export type SimEvmSubmitInput = { serializedTransaction: string; sandboxTenantId?: string | null } & SenderRule;
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
} & SenderRule;
export type SimTransferResult = { txHash: string; status: "success" | "failed"; blockNumber: number; failureReason: string | null };

export type SimEmitLogInput = { address: string; topics: string[]; data: string; from: string; sandboxTenantId?: string | null };
export type SimEmitLogResult = { txHash: string; blockNumber: number };

export type SimFundInput = { loanId: string; to: string; amount: bigint; reference: string };
export type SimFundResult = {
  txHash: string;
  status: "success" | "reverted" | "failed";
  blockNumber: number;
  /** Block time, unix seconds. */
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

type Head = { number: number; timestamp: number };

const key = {
  chain: "chain",
  ledger: "ledger",
  head: "head",
  /** Zero-padded so that key order is block order. */
  block: (n: number) => `block:${String(n).padStart(16, "0")}`,
  blockPrefix: "block:",
  hash: (hash: string) => `hash:${hash.toLowerCase()}`,
  balance: (token: string, address: string) => `bal:${token}:${address}`,
  allowance: (token: string, owner: string, spender: string) => `allow:${token}:${owner}:${spender}`,
  nonce: (address: string) => `nonce:${address}`,
  funding: (reference: string) => `fund:${reference}`,
};

const mintAbi = parseAbi(["function mint(address to, uint256 amount) returns (bool)"]);

/**
 * One simulated chain: stablecoin balances, ERC-20 allowances, nonces, one
 * transaction per block, receipts and logs, kept in a SimStorage. The rules
 * are the real ones: EVM transactions are parsed and their sender recovered
 * with viem, calldata is decoded with the real ABIs (erc20Abi, SVC_POOL_ABI),
 * USDC's ERC-20 rules decide success, and a reverted transaction changes
 * nothing but its sender's nonce. Logs are encoded by viem, so a listener
 * that decodes them with the same ABIs reads what a live chain would give it.
 *
 * Every operation computes its writes first and stores them in one `put`, so
 * a call is applied whole or not at all; operations run one after another
 * (a Durable Object per tenant and chain adds the single-writer guarantee across
 * requests).
 *
 * @example
 * const chain = new SimChainEngine("POLYGON_AMOY", memorySimStorage(), systemClock);
 * await chain.faucet({ address: borrower.address, amount: 100_000_000n });
 * await chain.submitEvmTransaction({ serializedTransaction: await borrower.signTransaction(approveTx) });
 */
export class SimChainEngine implements SimChainOps {
  private readonly config: ChainConfig;
  private readonly stablecoin: string;
  private queue: Promise<unknown> = Promise.resolve();
  private chainMarked = false;

  /**
   * `ledger` names whose ledger this is (`<tenantId>:<chain>` for a sandbox
   * tenant's): it is written into the storage on first use and checked after,
   * and it makes the hashes of unsigned transactions unique to the ledger.
   */
  constructor(
    readonly chain: Chain,
    private readonly storage: SimStorage,
    private readonly clock: Clock,
    readonly ledger: string = chain,
  ) {
    const config = CHAIN_CONFIG[chain];
    if (!config.simulated) throw new RangeError(`${chain} is not a simulated chain`);
    this.config = config;
    this.stablecoin = config.family === "EVM" ? getAddress(config.token.address) : config.token.address;
  }

  faucet(input: SimFaucetInput): Promise<SimFaucetResult> {
    return this.serially(async (state) => {
      const to = this.address(input.address, "address");
      const amount = positiveAmount(input.amount);
      const token = input.token === undefined ? this.stablecoin : this.address(input.token, "token");
      if (this.config.family === "EVM" && token !== this.stablecoin) {
        throw new SimChainRejected(`the faucet on ${this.chain} mints only the stablecoin ${this.stablecoin}`);
      }
      const balance = await this.balance(state, token, to);
      if (balance + amount > maxUint256) throw new SimChainRejected("amount would overflow the balance");
      state.set(key.balance(token, to), balance + amount);
      const tx = await this.include(state, ({ number, timestamp }) =>
        this.config.family === "EVM"
          ? {
              family: "EVM",
              chain: this.chain,
              hash: this.syntheticHash("faucet", number, to, amount),
              blockNumber: number,
              timestamp,
              from: SIM_FAUCET_MINTER,
              to: token,
              input: encodeFunctionData({ abi: mintAbi, functionName: "mint", args: [to as Address, amount] }),
              status: "success",
              logs: [transferLog(token as Address, zeroAddress, to as Address, amount, 0)],
              sandboxTenantId: input.sandboxTenantId ?? null,
              kind: "faucet",
              failureReason: null,
            }
          : {
              // Minted by the jetton master (TON) or the mint authority (Solana).
              family: this.config.family === "TON" ? "TON" : "SOLANA",
              chain: this.chain,
              hash: this.syntheticHash("faucet", number, to, amount),
              blockNumber: number,
              timestamp,
              from: token,
              to,
              token,
              amount,
              comment: null,
              status: "success",
              sandboxTenantId: input.sandboxTenantId ?? null,
              kind: "faucet",
              failureReason: null,
            },
      );
      await this.commit(state);
      return { txHash: tx.hash, blockNumber: tx.blockNumber };
    });
  }

  submitEvmTransaction(input: SimEvmSubmitInput): Promise<SimEvmSubmitResult> {
    return this.serially(async (state) => {
      this.requireFamily("EVM", "submitEvmTransaction");
      const serialized = input.serializedTransaction;
      if (typeof serialized !== "string" || !isHex(serialized, { strict: true }) || serialized.length < 4) {
        throw new SimChainRejected("the transaction must be a 0x-prefixed hex string of a serialized transaction");
      }
      let parsed: ReturnType<typeof parseTransaction>;
      try {
        parsed = parseTransaction(serialized);
      } catch {
        throw new SimChainRejected("the transaction cannot be parsed as a serialized EVM transaction");
      }
      if (parsed.type !== "legacy" && parsed.type !== "eip2930" && parsed.type !== "eip1559") {
        throw new SimChainRejected(`${parsed.type} transactions are not supported`);
      }
      if (parsed.r === undefined || parsed.s === undefined) throw new SimChainRejected("the transaction is not signed");
      if (parsed.chainId === undefined) {
        throw new SimChainRejected("the transaction has no chain id (EIP-155 replay protection is required)");
      }
      if (parsed.chainId !== this.config.chainId) {
        throw new SimChainRejected(`the transaction is for chain id ${parsed.chainId}, not ${this.config.chainId} (${this.chain})`);
      }
      let from: Address;
      try {
        from = getAddress(await recoverTransactionAddress({ serializedTransaction: serialized as TransactionSerialized }));
      } catch {
        throw new SimChainRejected("the transaction's signature cannot be recovered");
      }

      // The same signed transaction sent again (a retried request) answers with its first inclusion.
      const hash = keccak256(serialized);
      const included = await this.transactionByHash(state, hash);
      if (included?.family === "EVM") {
        return { txHash: included.hash, status: included.status, blockNumber: included.blockNumber, from: included.from, revertReason: included.failureReason };
      }

      const expected = await this.nonce(state, from);
      if (input.requireFundedSender && expected === 0 && !(await this.hasHeld(state, this.stablecoin, from))) {
        throw new SimChainRejected(`${from} has never held ${this.config.token.symbol} on this ledger: fund it first`);
      }
      const nonce = parsed.nonce ?? 0;
      if (nonce !== expected) {
        // The sender's next nonce is not disclosed: a wallet keeps its own count.
        throw new SimChainRejected(`wrong nonce: ${nonce} is not the next nonce of ${from}`);
      }
      if ((parsed.value ?? 0n) !== 0n) {
        throw new SimChainRejected("the transaction sends native value, which the simulated chains do not have (value must be 0)");
      }

      const to = parsed.to ? getAddress(parsed.to) : null;
      const data = parsed.data ?? "0x";
      const outcome = await this.execute(state, { from, to, data });
      state.set(key.nonce(from), expected + 1);
      const tx = await this.include(state, ({ number, timestamp }) => ({
        family: "EVM",
        chain: this.chain,
        hash,
        blockNumber: number,
        timestamp,
        from,
        to,
        input: data,
        status: outcome.status,
        logs: outcome.status === "success" ? outcome.logs : [],
        sandboxTenantId: input.sandboxTenantId ?? null,
        kind: "evm",
        failureReason: outcome.status === "reverted" ? outcome.reason : null,
      }));
      await this.commit(state);
      return { txHash: tx.hash, status: outcome.status, blockNumber: tx.blockNumber, from, revertReason: tx.failureReason };
    });
  }

  transferToken(input: SimTransferInput): Promise<SimTransferResult> {
    return this.serially(async (state) => {
      if (this.config.family === "EVM") {
        throw new SimChainRejected(`${this.chain} is an EVM chain: submit a signed transaction calling the token's transfer instead`);
      }
      const from = this.address(input.from, "from");
      const to = this.address(input.to, "to");
      const amount = positiveAmount(input.amount);
      const token = input.token === undefined ? this.stablecoin : this.address(input.token, "token");
      // Only the service's own funding moves the platform's wallet (fundFromPool).
      if (this.isPlatformWallet(from)) throw new SimChainRejected(`from ${from} is the platform's settlement wallet; only funding moves its tokens`);
      if (input.requireFundedSender && !(await this.hasHeld(state, token, from))) {
        throw new SimChainRejected(`from ${from} has never held this token on this ledger: fund it first`);
      }
      const comment = input.comment ?? null;
      if (comment !== null && typeof comment !== "string") throw new SimChainRejected("comment must be a string");
      const failureReason = await this.move(state, token, from, to, amount);
      const tx = await this.include(state, ({ number, timestamp }) => ({
        family: this.config.family === "TON" ? "TON" : "SOLANA",
        chain: this.chain,
        hash: this.syntheticHash("transfer", number, from, to, token, amount, comment),
        blockNumber: number,
        timestamp,
        from,
        to,
        token,
        amount,
        comment,
        status: failureReason ? "failed" : "success",
        sandboxTenantId: input.sandboxTenantId ?? null,
        kind: "transfer",
        failureReason,
      }));
      await this.commit(state);
      return { txHash: tx.hash, status: failureReason ? "failed" : "success", blockNumber: tx.blockNumber, failureReason };
    });
  }

  emitLogAs(input: SimEmitLogInput): Promise<SimEmitLogResult> {
    return this.serially(async (state) => {
      this.requireFamily("EVM", "emitLogAs");
      const address = this.address(input.address, "address") as Address;
      if (address === this.stablecoin || address === this.pool()) {
        throw new SimChainRejected(`${address} is a contract this chain executes; its logs come only from its own code`);
      }
      const from = this.address(input.from, "from") as Address;
      if (!Array.isArray(input.topics) || input.topics.length > 4 || !input.topics.every((t) => /^0x[0-9a-fA-F]{64}$/.test(t))) {
        throw new SimChainRejected("topics must be at most 4 hex strings of 32 bytes");
      }
      if (typeof input.data !== "string" || !/^0x([0-9a-fA-F]{2})*$/.test(input.data)) {
        throw new SimChainRejected("data must be a 0x-prefixed hex string of whole bytes");
      }
      const nonce = await this.nonce(state, from);
      state.set(key.nonce(from), nonce + 1);
      const log: EvmLog = { address, topics: input.topics.map((t) => t.toLowerCase()), data: input.data.toLowerCase(), logIndex: 0 };
      const tx = await this.include(state, ({ number, timestamp }) => ({
        family: "EVM",
        chain: this.chain,
        hash: this.syntheticHash("impostor", number, from, address),
        blockNumber: number,
        timestamp,
        from,
        to: address,
        input: "0x",
        status: "success",
        logs: [log],
        sandboxTenantId: input.sandboxTenantId ?? null,
        kind: "impostor",
        failureReason: null,
      }));
      await this.commit(state);
      return { txHash: tx.hash, blockNumber: tx.blockNumber };
    });
  }

  fundFromPool(input: SimFundInput): Promise<SimFundResult> {
    return this.serially(async (state) => {
      if (typeof input.reference !== "string" || input.reference === "") throw new SimChainRejected("reference must be a non-empty string");
      const sent = await state.get<SimFundResult>(key.funding(input.reference));
      if (sent) return sent;
      const to = this.address(input.to, "to");
      const amount = positiveAmount(input.amount);

      let tx: SimTransaction;
      if (this.config.family === "EVM") {
        let loanId: Hex;
        try {
          loanId = loanIdToBytes32(input.loanId);
        } catch {
          throw new SimChainRejected(`loanId must be a UUID, not ${JSON.stringify(input.loanId)}`);
        }
        const operator = getAddress(SIMULATED_OPERATOR);
        const data = encodeFunctionData({ abi: SVC_POOL_ABI, functionName: "fund", args: [loanId, to as Address, amount] });
        const outcome = await this.execute(state, { from: operator, to: this.pool(), data });
        state.set(key.nonce(operator), (await this.nonce(state, operator)) + 1);
        tx = await this.include(state, ({ number, timestamp }) => ({
          family: "EVM",
          chain: this.chain,
          hash: this.syntheticHash("fund", number, input.reference),
          blockNumber: number,
          timestamp,
          from: operator,
          to: this.pool(),
          input: data,
          status: outcome.status,
          logs: outcome.status === "success" ? outcome.logs : [],
          sandboxTenantId: null,
          kind: "fund",
          failureReason: outcome.status === "reverted" ? outcome.reason : null,
        }));
      } else {
        const source = this.config.fundingSource!;
        const failureReason = await this.move(state, this.stablecoin, source, to, amount);
        tx = await this.include(state, ({ number, timestamp }) => ({
          family: this.config.family === "TON" ? "TON" : "SOLANA",
          chain: this.chain,
          hash: this.syntheticHash("fund", number, input.reference),
          blockNumber: number,
          timestamp,
          from: source,
          to,
          token: this.stablecoin,
          amount,
          comment: `svc:fund:${input.loanId}`,
          status: failureReason ? "failed" : "success",
          sandboxTenantId: null,
          kind: "fund",
          failureReason,
        }));
      }
      const result: SimFundResult = { txHash: tx.hash, status: tx.status, blockNumber: tx.blockNumber, timestamp: tx.timestamp, failureReason: tx.failureReason };
      // Only a transfer that moved money answers for its reference: a failed one
      // moved nothing, so a retry (after the pool is topped up) may still send.
      if (result.status === "success") state.set(key.funding(input.reference), result);
      await this.commit(state);
      return result;
    });
  }

  readTransactions(afterBlock: number, limit: number): Promise<SimReadResult> {
    return this.serially(async (state) => {
      const first = Math.max(0, Math.floor(Number(afterBlock) || 0)) + 1;
      const count = Math.min(SIM_READ_LIMIT, Math.max(0, Math.floor(Number(limit) || 0)));
      const head = (await state.get<Head>(key.head))?.number ?? 0;
      if (count === 0 || first > head) return { transactions: [], head };
      const blocks = await this.storage.list<SimTransaction>({ prefix: key.blockPrefix, start: key.block(first), limit: count });
      return { transactions: [...blocks.values()].map(toChainTransaction), head };
    });
  }

  head(): Promise<number> {
    return this.serially(async (state) => (await state.get<Head>(key.head))?.number ?? 0);
  }

  getTransaction(hash: string): Promise<SimTransaction | null> {
    return this.serially(async (state) => (typeof hash === "string" ? this.transactionByHash(state, hash) : null));
  }

  balanceOf(address: string, token?: string): Promise<bigint> {
    return this.serially(async (state) =>
      this.balance(state, token === undefined ? this.stablecoin : this.address(token, "token"), this.address(address, "address")),
    );
  }

  allowance(owner: string, spender: string): Promise<bigint> {
    return this.serially(async (state) => {
      this.requireFamily("EVM", "allowance");
      return (await state.get<bigint>(key.allowance(this.stablecoin, this.address(owner, "owner"), this.address(spender, "spender")))) ?? 0n;
    });
  }

  nonceOf(address: string): Promise<number> {
    return this.serially(async (state) => {
      this.requireFamily("EVM", "nonceOf");
      return this.nonce(state, this.address(address, "address"));
    });
  }

  // --- EVM execution -------------------------------------------------------

  /**
   * Runs a call against the two contracts this chain has code for. The writes
   * go to a fork of `state` that is merged only on success: a revert leaves
   * balances and allowances as they were.
   */
  private async execute(state: WorkingState, call: EvmCall): Promise<{ status: "success"; logs: EvmLog[] } | { status: "reverted"; reason: string }> {
    const fork = state.fork();
    try {
      const logs = await this.dispatch(fork, call);
      fork.mergeIntoParent();
      return { status: "success", logs: logs.map((log, logIndex) => ({ ...log, logIndex })) };
    } catch (error) {
      if (error instanceof Revert) return { status: "reverted", reason: error.message };
      throw error;
    }
  }

  private async dispatch(state: WorkingState, { from, to, data }: EvmCall): Promise<EvmLog[]> {
    if (to === null) throw new Revert("contract creation is not simulated");
    if (to === this.stablecoin) return this.tokenCall(state, from, data);
    if (to === this.pool()) return this.poolCall(state, from, data);
    // Any other address has no code here: as on a real chain, the call succeeds and does nothing.
    return [];
  }

  /** The stablecoin, with USDC's (FiatToken) rules and revert messages. */
  private async tokenCall(state: WorkingState, sender: Address, data: Hex): Promise<EvmLog[]> {
    const call = decodeOrRevert(() => decodeFunctionData({ abi: erc20Abi, data }));
    switch (call.functionName) {
      case "approve": {
        const [spender, value] = call.args;
        if (getAddress(spender) === zeroAddress) throw new Revert("ERC20: approve to the zero address");
        state.set(key.allowance(this.stablecoin, sender, getAddress(spender)), value);
        return [approvalLog(this.stablecoin, sender, getAddress(spender), value)];
      }
      case "transfer": {
        const [to, value] = call.args;
        return [await this.evmTransfer(state, sender, getAddress(to), value)];
      }
      case "transferFrom": {
        const [owner, to, value] = call.args;
        await this.spendAllowance(state, getAddress(owner), sender, value);
        return [await this.evmTransfer(state, getAddress(owner), getAddress(to), value)];
      }
      default:
        // balanceOf, allowance, decimals, name, symbol, totalSupply: views change nothing.
        return [];
    }
  }

  /** SvcPool.sol, statement by statement. */
  private async poolCall(state: WorkingState, sender: Address, data: Hex): Promise<EvmLog[]> {
    const pool = this.pool();
    const operator = getAddress(SIMULATED_OPERATOR);
    const call = decodeOrRevert(() => decodeFunctionData({ abi: SVC_POOL_ABI, data }));
    switch (call.functionName) {
      case "repay": {
        const [loanId, amount] = call.args;
        if (amount === 0n) throw new Revert("ZeroAmount()");
        // token.transferFrom(msg.sender, address(this), amount): the pool is the spender.
        await this.spendAllowance(state, sender, pool, amount);
        const transfer = await this.evmTransfer(state, sender, pool, amount);
        return [transfer, poolLog(pool, "Repaid", [loanId, sender], amount)];
      }
      case "fund": {
        const [loanId, borrower, amount] = call.args;
        if (sender !== operator) throw new Revert("NotOperator()");
        if (amount === 0n) throw new Revert("ZeroAmount()");
        const transfer = await this.evmTransfer(state, pool, getAddress(borrower), amount);
        return [transfer, poolLog(pool, "Funded", [loanId, getAddress(borrower)], amount)];
      }
      case "collect": {
        const [to, amount] = call.args;
        if (sender !== operator) throw new Revert("NotOperator()");
        const transfer = await this.evmTransfer(state, pool, getAddress(to), amount);
        return [transfer, poolLog(pool, "Collected", [getAddress(to)], amount)];
      }
      default:
        // token(), operator(): views.
        return [];
    }
  }

  private async spendAllowance(state: WorkingState, owner: Address, spender: Address, value: bigint): Promise<void> {
    const k = key.allowance(this.stablecoin, owner, spender);
    const allowed = (await state.get<bigint>(k)) ?? 0n;
    if (value > allowed) throw new Revert("ERC20: transfer amount exceeds allowance");
    state.set(k, allowed - value);
  }

  private async evmTransfer(state: WorkingState, from: Address, to: Address, value: bigint): Promise<EvmLog> {
    if (to === zeroAddress) throw new Revert("ERC20: transfer to the zero address");
    const failure = await this.move(state, this.stablecoin, from, to, value);
    if (failure) throw new Revert("ERC20: transfer amount exceeds balance");
    return transferLog(this.stablecoin as Address, from, to, value, 0);
  }

  // --- state ---------------------------------------------------------------

  /** Moves `amount` of `token`, or answers why it cannot (and moves nothing). */
  private async move(state: WorkingState, token: string, from: string, to: string, amount: bigint): Promise<string | null> {
    const fromBalance = await this.balance(state, token, from);
    if (fromBalance < amount) return `insufficient balance: ${from} holds ${fromBalance} units, the transfer needs ${amount}`;
    state.set(key.balance(token, from), fromBalance - amount);
    // Read after the debit, so that a transfer to oneself nets to zero.
    state.set(key.balance(token, to), (await this.balance(state, token, to)) + amount);
    return null;
  }

  private async balance(state: WorkingState, token: string, address: string): Promise<bigint> {
    const stored = await state.get<bigint>(key.balance(token, address));
    if (stored !== undefined) return stored;
    return token === this.stablecoin && address === this.fundingSource() ? SIM_POOL_GENESIS_BALANCE : 0n;
  }

  /** Whether `address` ever held `token` here: a stored balance, even one spent down to 0. */
  private async hasHeld(state: WorkingState, token: string, address: string): Promise<boolean> {
    return (await state.get<bigint>(key.balance(token, address))) !== undefined;
  }

  private isPlatformWallet(address: string): boolean {
    return address === this.fundingSource() || address === this.config.settlementWallet;
  }

  private async nonce(state: WorkingState, address: string): Promise<number> {
    return (await state.get<number>(key.nonce(address))) ?? 0;
  }

  private async transactionByHash(state: WorkingState, hash: string): Promise<SimTransaction | null> {
    const block = await state.get<number>(key.hash(hash));
    return block === undefined ? null : ((await state.get<SimTransaction>(key.block(block))) ?? null);
  }

  /** Appends the transaction as the next block; its time never runs backwards. */
  private async include(state: WorkingState, build: (block: Head) => SimTransaction): Promise<SimTransaction> {
    const previous = (await state.get<Head>(key.head)) ?? { number: 0, timestamp: 0 };
    const block: Head = {
      number: previous.number + 1,
      timestamp: Math.max(previous.timestamp, Math.floor(this.clock.now().getTime() / 1000)),
    };
    const tx = build(block);
    state.set(key.head, block);
    state.set(key.block(block.number), tx);
    state.set(key.hash(tx.hash), block.number);
    return tx;
  }

  private async commit(state: WorkingState): Promise<void> {
    await this.storage.put(state.entries());
  }

  /**
   * Runs operations one at a time, each on a fresh working state. The first
   * one checks that the storage belongs to this chain and ledger (a Durable
   * Object per tenant and chain: a mix-up must not merge two ledgers).
   */
  private serially<T>(op: (state: WorkingState) => Promise<T>): Promise<T> {
    const run = this.queue.then(async () => {
      if (!this.chainMarked) {
        const [chain, ledger] = await Promise.all([this.storage.get<Chain>(key.chain), this.storage.get<string>(key.ledger)]);
        if (chain === undefined) await this.storage.put({ [key.chain]: this.chain, [key.ledger]: this.ledger });
        else if (chain !== this.chain) throw new Error(`this storage holds the simulated chain ${chain}, not ${this.chain}`);
        else if ((ledger ?? this.chain) !== this.ledger) throw new Error(`this storage holds the ledger ${ledger ?? this.chain}, not ${this.ledger}`);
        this.chainMarked = true;
      }
      return op(new WorkingState(this.storage));
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  // --- inputs --------------------------------------------------------------

  /** The canonical form of an address on this chain (EIP-55 on EVM, raw on TON, base58 on Solana). */
  private address(input: string, field: string): string {
    if (typeof input !== "string") throw new SimChainRejected(`${field} must be an address string`);
    const result = canonicalAddress(this.chain, input);
    if (!result.ok) throw new SimChainRejected(`${field} ${result.reason}`);
    return result.address;
  }

  private requireFamily(family: ChainConfig["family"], operation: string): void {
    if (this.config.family !== family) throw new SimChainRejected(`${operation} is for ${family} chains; ${this.chain} is ${this.config.family}`);
  }

  private pool(): Address {
    return getAddress(this.config.pool!);
  }

  private fundingSource(): string {
    return this.config.family === "EVM" ? this.pool() : this.config.fundingSource!;
  }

  /** Transactions nobody signed (faucet, transfers, funding) get a unique hash from their block. */
  private syntheticHash(kind: SimTxKind, block: number, ...parts: unknown[]): string {
    return keccak256(toHex([this.ledger, kind, block, ...parts.map(String)].join("|")));
  }
}

type EvmCall = { from: Address; to: Address | null; data: Hex };

/** An EVM revert inside execution: rolls back the call, not the transaction's inclusion. */
class Revert extends Error {}

function decodeOrRevert<T>(decode: () => T): T {
  try {
    return decode();
  } catch {
    throw new Revert("no function matches the calldata");
  }
}

function positiveAmount(amount: unknown): bigint {
  if (typeof amount !== "bigint" || amount <= 0n) throw new SimChainRejected("amount must be a positive integer number of units");
  if (amount > maxUint256) throw new SimChainRejected("amount exceeds uint256");
  return amount;
}

const uint256Data = (value: bigint): Hex => encodeAbiParameters([{ type: "uint256" }], [value]);

/** Every indexed argument is given, so every topic is a single 32-byte value. */
const topicList = (topics: readonly unknown[]): string[] => topics as string[];

function transferLog(token: Address, from: Address, to: Address, value: bigint, logIndex: number): EvmLog {
  const topics = encodeEventTopics({ abi: erc20Abi, eventName: "Transfer", args: { from, to } });
  return { address: token, topics: topicList(topics), data: uint256Data(value), logIndex };
}

function approvalLog(token: string, owner: Address, spender: Address, value: bigint): EvmLog {
  const topics = encodeEventTopics({ abi: erc20Abi, eventName: "Approval", args: { owner, spender } });
  return { address: token, topics: topicList(topics), data: uint256Data(value), logIndex: 0 };
}

function poolLog(pool: Address, event: "Repaid" | "Funded" | "Collected", indexed: readonly string[], amount: bigint): EvmLog {
  const topics =
    event === "Repaid"
      ? encodeEventTopics({ abi: SVC_POOL_ABI, eventName: "Repaid", args: { loanId: indexed[0] as Hex, payer: indexed[1] as Address } })
      : event === "Funded"
        ? encodeEventTopics({ abi: SVC_POOL_ABI, eventName: "Funded", args: { loanId: indexed[0] as Hex, borrower: indexed[1] as Address } })
        : encodeEventTopics({ abi: SVC_POOL_ABI, eventName: "Collected", args: { to: indexed[0] as Address } });
  return { address: pool, topics: topicList(topics), data: uint256Data(amount), logIndex: 0 };
}

/** The port's view of a stored transaction (without the simulator's bookkeeping). */
function toChainTransaction(tx: SimTransaction): ChainTransaction {
  if (tx.family === "EVM") {
    const { kind: _kind, failureReason: _reason, ...evm } = tx;
    return evm;
  }
  const { kind: _kind, failureReason: _reason, ...transfer } = tx;
  return transfer;
}

/**
 * The writes of one operation, over the stored state: reads see the pending
 * writes first. A fork holds the writes of an EVM call until it succeeds.
 */
class WorkingState {
  private readonly writes = new Map<string, unknown>();

  constructor(
    private readonly storage: SimStorage,
    private readonly parent: WorkingState | null = null,
  ) {}

  async get<T>(k: string): Promise<T | undefined> {
    if (this.writes.has(k)) return this.writes.get(k) as T;
    return this.parent ? this.parent.get<T>(k) : this.storage.get<T>(k);
  }

  set(k: string, value: unknown): void {
    this.writes.set(k, value);
  }

  fork(): WorkingState {
    return new WorkingState(this.storage, this);
  }

  mergeIntoParent(): void {
    if (!this.parent) throw new Error("only a fork merges into its parent");
    for (const [k, v] of this.writes) this.parent.set(k, v);
  }

  entries(): Record<string, unknown> {
    return Object.fromEntries(this.writes);
  }
}
