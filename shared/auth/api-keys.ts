import type { TenantMode } from "../domain/rails.ts";
import { randomToken } from "../domain/ids.ts";

/**
 * API keys: `svc_test_…` for sandbox keys, `svc_live_…` for live ones (the key's mode, DECISIONS.md "Modes"), 32
 * random base62 characters (~190 bits). Only the SHA-256 of a key is stored:
 * with that much entropy a salt adds nothing, and the hash is the lookup key.
 */
export const API_KEY_PREFIX_LENGTH = 13;

export function generateApiKey(mode: TenantMode): { key: string; prefix: string } {
  const key = `svc_${mode === "live" ? "live" : "test"}_${randomToken(32)}`;
  return { key, prefix: key.slice(0, API_KEY_PREFIX_LENGTH) };
}

export async function hashApiKey(key: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Embed keys identify a widget program publicly; they grant nothing. */
export const generateEmbedKey = (mode: TenantMode): string => `ek_${mode === "live" ? "live" : "test"}_${randomToken(24)}`;

/**
 * The mode a widget program acts in: its embed key's, fixed when the program
 * was made (DECISIONS.md "Modes"), so a sandbox program (`ek_test_…`) keeps
 * lending on the sandbox chain after its tenant is certified.
 */
export const embedKeyMode = (embedKey: string): TenantMode => (embedKey.startsWith("ek_live_") ? "live" : "sandbox");
