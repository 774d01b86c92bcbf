import type { Client } from "@libsql/client";
import type { D1FaultPolicy } from "../chaos/faults.ts";
import { faultyLibsql } from "../chaos/faulty-d1.ts";

/** D1's own words when its writer's queue is full. */
export const OVERLOADED = "D1_ERROR: D1 DB is overloaded. Too many requests queued.";

/** The libSQL fault wrapper (shared/chaos), its injected faults turned into D1's "overloaded" error. */
export function overloadedLibsql(client: Client, policy: D1FaultPolicy): Client {
  const faulty = faultyLibsql(client, policy);
  const rethrow = (err: unknown) => {
    throw err instanceof Error && err.name === "InjectedFault" ? new Error(OVERLOADED) : err;
  };
  return new Proxy(faulty, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop === "execute" || prop === "batch") return (...args: unknown[]) => (value as (...a: unknown[]) => Promise<unknown>)(...args).catch(rethrow);
      return value;
    },
  });
}
