import { memorySimStorage } from "../../simulated/sim-storage.ts";
import { EvmSenderBook } from "./evm-sender-book.ts";
import { type EvmSenders, senderName } from "./evm-send-record.ts";

/**
 * The senders' nonce books in memory, one per (chain, address), for the Bun
 * tier: the same book the Durable Object runs, over memory storage.
 *
 * @example const port = evmLivePort({ settings, signers, env: {}, senders: memoryEvmSenders() })
 */
export function memoryEvmSenders(): EvmSenders {
  const books = new Map<string, EvmSenderBook>();
  return {
    sender(chain, address) {
      const name = senderName(chain, address);
      let book = books.get(name);
      if (!book) {
        book = new EvmSenderBook(memorySimStorage(), name);
        books.set(name, book);
      }
      return book;
    },
  };
}
