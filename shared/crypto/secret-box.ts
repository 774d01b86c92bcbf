/**
 * Secrets the service must use again (webhook signing secrets) are encrypted
 * at rest with AES-256-GCM under a worker secret (`SECRETS_KEY`), never stored
 * in the clear. Format: `v1.<iv base64>.<ciphertext base64>`.
 */
const b64 = (b: Uint8Array) => btoa(String.fromCharCode(...b));
const unb64 = (s: string) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));

async function deriveKey(secretsKey: string): Promise<CryptoKey> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(secretsKey));
  return crypto.subtle.importKey("raw", digest, "AES-GCM", false, ["encrypt", "decrypt"]);
}

/**
 * The AES key of each `secretsKey` seen, derived once per isolate rather than
 * for every secret opened (a webhook batch opens one per attempt). A
 * deployment has one (two while it rotates); a few more clear the lot.
 */
const derived = new Map<string, Promise<CryptoKey>>();
const KEYS_KEPT = 4;

function keyFrom(secretsKey: string): Promise<CryptoKey> {
  let key = derived.get(secretsKey);
  if (!key) {
    if (derived.size >= KEYS_KEPT) derived.clear();
    key = deriveKey(secretsKey);
    derived.set(secretsKey, key);
    key.catch(() => derived.delete(secretsKey));
  }
  return key;
}

export async function sealSecret(plaintext: string, secretsKey: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await keyFrom(secretsKey), new TextEncoder().encode(plaintext));
  return `v1.${b64(iv)}.${b64(new Uint8Array(ct))}`;
}

export async function openSecret(sealed: string, secretsKey: string): Promise<string> {
  const [version, iv, ct] = sealed.split(".");
  if (version !== "v1" || !iv || !ct) throw new Error("unknown sealed-secret format");
  const pt = await crypto.subtle.decrypt({ name: "AES-GCM", iv: unb64(iv) }, await keyFrom(secretsKey), unb64(ct));
  return new TextDecoder().decode(pt);
}

/** Only `npm run dev` and tests may run without SECRETS_KEY. */
export const DEV_SECRETS_KEY = "dev-only-secrets-key-never-used-in-deployments";
