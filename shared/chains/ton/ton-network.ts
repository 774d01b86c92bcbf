import type { Address, Cell, Transaction, TupleItem, TupleReader } from "@ton/core";

/** An account as the network reports it: its state and its nanoton balance. */
export type TonAccount = { state: "active" | "uninit" | "frozen" | "nonexist"; balance: bigint };

/**
 * The little of TON the live adapter and the TON listener need, so the same
 * code runs against toncenter (production, `toncenterNetwork`) and against the
 * emulator in the tests (`sandboxNetwork`, testing/). Every read sees only
 * committed transactions (toncenter serves masterchain-final state).
 */
export interface TonNetwork {
  /** Runs a get-method; throws when the account is not active or the method exits with an error. */
  runGetMethod(address: Address, method: string, args?: TupleItem[]): Promise<TupleReader>;
  /** Broadcasts an external message (the whole message cell, as a BOC is made of). */
  sendExternal(message: Cell): Promise<void>;
  account(address: Address): Promise<TonAccount>;
  /**
   * The account's transactions newest first, at most `limit`, starting at the
   * transaction (`lt`, `hash`) inclusive, or at the newest without them.
   */
  transactions(address: Address, options: { limit: number; lt?: bigint; hash?: Buffer }): Promise<Transaction[]>;
}

/** A wallet's seqno: 0 before the wallet is deployed (its first message carries its code). */
export async function readSeqno(network: TonNetwork, wallet: Address): Promise<number> {
  const account = await network.account(wallet);
  if (account.state !== "active") return 0;
  return (await network.runGetMethod(wallet, "seqno")).readNumber();
}
