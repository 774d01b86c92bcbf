import type { Client } from "@libsql/client";

/**
 * A libSQL client whose `nth` batch from now fails (a D1 error that is not
 * transient), everything else passing through: to cut a multi-batch piece
 * of work at a chosen batch.
 *
 * @example
 * const failing = failingBatch(t.client);
 * failing.failBatch(3); // the claims, the first group of records, then this one fails
 * await processDeliveryBatch({ ...deps, db: createDb(failing.client) }, msgs);
 */
export function failingBatch(client: Client): { client: Client; failBatch(nth: number): void } {
  let calls = 0;
  let failAt = 0;
  const proxy = new Proxy(client, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (prop === "batch" && ++calls === failAt) throw new Error("D1_ERROR: no such table: nowhere");
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return {
    client: proxy,
    failBatch(nth) {
      calls = 0;
      failAt = nth;
    },
  };
}
