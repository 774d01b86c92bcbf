import type { Chain } from "../../domain/rails.ts";
import type { SimFundResult } from "./sim-chain-ops.ts";
import type { SimChainContext } from "./sim-chain-context.ts";
import type { SimStorage } from "./sim-storage.ts";
import type { WorkingState } from "./sim-working-state.ts";

/**
 * What the pool (EVM) or the settlement wallet (TON, Solana) holds before
 * anything happened: a genesis allocation, not a transaction, so no listener
 * ever sees it as a payment. 10^15 units = 10^9 of the stablecoin.
 */
export const SIM_POOL_GENESIS_BALANCE = 10n ** 15n;

/**
 * Every key a ledger stores, in one place: Durable Objects keep them across
 * deploys, so a key never changes shape.
 */
export const ledgerKey = {
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

/**
 * Marks an empty storage as this chain's and ledger's, or checks the mark:
 * one Durable Object per tenant and chain, and a mix-up must not merge two
 * ledgers. (A storage from before per-tenant ledgers has no ledger mark: it
 * is the chain's own.)
 */
export async function claimStorage(storage: SimStorage, chain: Chain, ledger: string): Promise<void> {
  const [markedChain, markedLedger] = await Promise.all([storage.get<Chain>(ledgerKey.chain), storage.get<string>(ledgerKey.ledger)]);
  if (markedChain === undefined) await storage.put({ [ledgerKey.chain]: chain, [ledgerKey.ledger]: ledger });
  else if (markedChain !== chain) throw new Error(`this storage holds the simulated chain ${markedChain}, not ${chain}`);
  else if ((markedLedger ?? chain) !== ledger) throw new Error(`this storage holds the ledger ${markedLedger ?? chain}, not ${ledger}`);
}

export async function balance(ctx: SimChainContext, state: WorkingState, token: string, address: string): Promise<bigint> {
  const stored = await state.get<bigint>(ledgerKey.balance(token, address));
  if (stored !== undefined) return stored;
  return token === ctx.stablecoin && address === ctx.fundingSource() ? SIM_POOL_GENESIS_BALANCE : 0n;
}

export function setBalance(state: WorkingState, token: string, address: string, value: bigint): void {
  state.set(ledgerKey.balance(token, address), value);
}

/** Whether `address` ever held `token` here: a stored balance, even one spent down to 0. */
export async function hasHeld(state: WorkingState, token: string, address: string): Promise<boolean> {
  return (await state.get<bigint>(ledgerKey.balance(token, address))) !== undefined;
}

/** Moves `amount` of `token`, or answers why it cannot (and moves nothing). */
export async function move(ctx: SimChainContext, state: WorkingState, token: string, from: string, to: string, amount: bigint): Promise<string | null> {
  const fromBalance = await balance(ctx, state, token, from);
  if (fromBalance < amount) return `insufficient balance: ${from} holds ${fromBalance} units, the transfer needs ${amount}`;
  setBalance(state, token, from, fromBalance - amount);
  // Read after the debit, so that a transfer to oneself nets to zero.
  setBalance(state, token, to, (await balance(ctx, state, token, to)) + amount);
  return null;
}

export async function allowance(state: WorkingState, token: string, owner: string, spender: string): Promise<bigint> {
  return (await state.get<bigint>(ledgerKey.allowance(token, owner, spender))) ?? 0n;
}

export function setAllowance(state: WorkingState, token: string, owner: string, spender: string, value: bigint): void {
  state.set(ledgerKey.allowance(token, owner, spender), value);
}

export async function nonce(state: WorkingState, address: string): Promise<number> {
  return (await state.get<number>(ledgerKey.nonce(address))) ?? 0;
}

export function setNonce(state: WorkingState, address: string, value: number): void {
  state.set(ledgerKey.nonce(address), value);
}

/** Counts one more transaction sent by `address`. */
export async function bumpNonce(state: WorkingState, address: string): Promise<void> {
  state.set(ledgerKey.nonce(address), (await nonce(state, address)) + 1);
}

/** The answer of a funding that succeeded, by its reference (what makes `fundFromPool` idempotent). */
export async function fundingSent(state: WorkingState, reference: string): Promise<SimFundResult | undefined> {
  return state.get<SimFundResult>(ledgerKey.funding(reference));
}

export function recordFundingSent(state: WorkingState, reference: string, result: SimFundResult): void {
  state.set(ledgerKey.funding(reference), result);
}
