import { Address, type Cell, type Transaction } from "@ton/core";
import type { Blockchain } from "@ton/sandbox";
import type { TonNetwork } from "../ton-network.ts";

/**
 * The TonNetwork of the tests: @ton/sandbox's emulator, running the real
 * wallet v5r1 and jetton code. Broadcast messages are delivered at once, or,
 * with `hold()`, kept until `deliver()`, so a test sees a transfer in flight.
 */
export type SandboxNetwork = TonNetwork & {
  hold(): void;
  /** Delivers held messages (each with every transaction it causes) and delivers at once again. */
  deliver(): Promise<void>;
  /** Takes the held messages away undelivered (as if lost on the way) and delivers at once again. */
  drop(): Cell[];
  /** Messages broadcast so far (held or not). */
  broadcasts: Cell[];
};

export function sandboxNetwork(blockchain: Blockchain): SandboxNetwork {
  let holding = false;
  let held: Cell[] = [];
  const broadcasts: Cell[] = [];
  return {
    broadcasts,
    hold() {
      holding = true;
    },
    drop() {
      holding = false;
      const lost = held;
      held = [];
      return lost;
    },
    async deliver() {
      holding = false;
      const pending = held;
      held = [];
      for (const message of pending) await blockchain.sendMessage(message).catch(() => undefined);
    },
    async runGetMethod(address, method, args = []) {
      const result = await blockchain.runGetMethod(address, method, args);
      if (result.exitCode !== 0 && result.exitCode !== 1) throw new Error(`get-method ${method} exited with ${result.exitCode}`);
      return result.stackReader;
    },
    async sendExternal(message) {
      broadcasts.push(message);
      if (holding) {
        held.push(message);
        return;
      }
      // A message the wallet refuses (bad signature, stale seqno) leaves no transaction, as on the real chain.
      await blockchain.sendMessage(message).catch(() => undefined);
    },
    async account(address) {
      const contract = await blockchain.getContract(address);
      const type = contract.accountState?.type;
      const state = type === "active" ? "active" : type === "frozen" ? "frozen" : type === "uninit" ? "uninit" : "nonexist";
      return { state, balance: contract.balance };
    },
    async transactions(address, { limit, lt, hash }) {
      // Not blockchain.getTransactions: in sandbox 0.41 it reverses its log in place on every call (so
      // the order flips) and compares hashes by identity (so a cursor is never found). Its log, read
      // directly, sorted newest first, and cut at the cursor as toncenter does.
      const log = (blockchain as unknown as { transactions: Transaction[] }).transactions;
      const mine = log
        .filter((tx) => tx.inMessage?.info.dest && Address.isAddress(tx.inMessage.info.dest) && tx.inMessage.info.dest.equals(address))
        .sort((a, b) => (a.lt < b.lt ? 1 : a.lt > b.lt ? -1 : 0));
      if (lt === undefined || !hash) return mine.slice(0, limit);
      const start = mine.findIndex((tx) => tx.lt === lt && tx.hash().equals(hash));
      if (start < 0) throw new Error(`no transaction ${lt}:${hash.toString("hex")} of ${address.toRawString()}`);
      return mine.slice(start, start + limit);
    },
  };
}
