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
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(key)));
  // Every authenticated request hashes its key: a table, not 32 padded toString calls.
  let hex = "";
  for (const b of digest) hex += HEX[b];
  return hex;
}

const encoder = new TextEncoder();
const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

/** Embed keys identify a widget program publicly; they grant nothing. */
export const generateEmbedKey = (mode: TenantMode): string => `ek_${mode === "live" ? "live" : "test"}_${randomToken(24)}`;

/**
 * The mode a widget program acts in: its embed key's, fixed when the program
 * was made (DECISIONS.md "Modes"), so a sandbox program (`ek_test_…`) keeps
 * lending on the sandbox chain after its tenant is certified.
 */
export const embedKeyMode = (embedKey: string): TenantMode => (embedKey.startsWith("ek_live_") ? "live" : "sandbox");
