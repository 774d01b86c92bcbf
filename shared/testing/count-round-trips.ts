import type { Client } from "@libsql/client";

/**
 * Counts a libSQL client's round trips (a statement or a batch each) while
 * `fn` runs: where statements reach the database, so prepared reads
 * (db/prepared-batch.ts), whose SQL is built once, are counted too.
 *
 * @example const { result, trips } = await countRoundTrips(t.client, () => t.request("GET", "/v1/me", …));
 */
export async function countRoundTrips<T>(client: Client, fn: () => Promise<T>): Promise<{ result: T; trips: number }> {
  const methods = client as unknown as Record<"execute" | "batch", (...args: unknown[]) => Promise<unknown>>;
  const { execute, batch } = methods;
  let trips = 0;
  methods.execute = (...args) => (trips++, execute.apply(client, args));
  methods.batch = (...args) => (trips++, batch.apply(client, args));
  try {
    return { result: await fn(), trips };
  } finally {
    methods.execute = execute;
    methods.batch = batch;
  }
}
