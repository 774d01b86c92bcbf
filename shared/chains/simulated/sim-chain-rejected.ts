/**
 * A simulated chain refused a request before including anything: the
 * transaction cannot be parsed, is unsigned, is for another chain id, has the
 * wrong nonce, or an input is malformed. Nothing was written. The sandbox API
 * answers 400 with `message` as the reason. (A transaction that is included
 * but fails is not a rejection: it is a result with status "reverted" or
 * "failed".)
 */
export class SimChainRejected extends Error {
  override readonly name = "SimChainRejected";
}

/**
 * How an operation's outcome crosses Durable Object RPC: thrown errors lose
 * their class on the way, so a rejection travels as a value and is thrown
 * again as a SimChainRejected on the caller's side.
 */
export type SimRpcResult<T> = { ok: true; value: T } | { ok: false; error: string };

/** Runs `op` in the object: a rejection becomes `{ ok: false, error }`; any other error stays a throw. */
export async function toRpcResult<T>(op: () => Promise<T>): Promise<SimRpcResult<T>> {
  try {
    return { ok: true, value: await op() };
  } catch (error) {
    if (error instanceof SimChainRejected) return { ok: false, error: error.message };
    throw error;
  }
}

/** The caller's side of `toRpcResult`: the value, or the rejection thrown again. */
export function fromRpcResult<T>(result: SimRpcResult<T>): T {
  if (!result.ok) throw new SimChainRejected(result.error);
  return result.value;
}
