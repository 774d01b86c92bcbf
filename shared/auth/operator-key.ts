/**
 * The platform operator's credential (DECISIONS.md "Go-live certification"):
 * the header `x-operator-key` against the worker secret `OPERATOR_KEY`.
 * Both sides are hashed with SHA-256 and the digests compared in constant
 * time, so neither the key's length nor a common prefix shows in timing.
 */

/** `npm run dev` and tests only, when OPERATOR_KEY is unset; never accepted outside development. */
export const DEV_OPERATOR_KEY = "svc_operator_dev";

export const OPERATOR_KEY_HEADER = "x-operator-key";

const sha256 = async (text: string) => new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));

/** Digests of configured secrets, so each request hashes only what it presents. */
const secretDigests = new Map<string, Promise<Uint8Array>>();

/** Whether `presented` is the operator key `secret`; false when either is missing. */
export async function operatorKeyMatches(secret: string | null | undefined, presented: string | undefined): Promise<boolean> {
  if (!secret || presented === undefined) return false;
  if (!secretDigests.has(secret)) secretDigests.set(secret, sha256(secret));
  const [expected, actual] = await Promise.all([secretDigests.get(secret)!, sha256(presented)]);
  let diff = 0;
  for (let i = 0; i < expected.length; i++) diff |= expected[i]! ^ actual[i]!;
  return diff === 0;
}
