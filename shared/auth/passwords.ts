/**
 * Password hashing: PBKDF2-SHA256 through WebCrypto with a per-user random
 * salt. workerd caps PBKDF2 at 100,000 iterations, so that is what we use;
 * the count is stored per user so it can be raised later.
 */
export const PBKDF2_ITERATIONS = 100_000;
export const MIN_PASSWORD_LENGTH = 12;

/** Letters, digits, punctuation and symbols, but not the ones that print as blank (Hangul fillers, the blank Braille pattern). */
const VISIBLE = /[\p{L}\p{N}\p{P}\p{S}]/u;
const BLANK = /[\u115F\u1160\u3164\uFFA0\u2800]/u;

/**
 * True when `password` has a character that shows: twelve spaces, or twelve
 * invisible or blank characters (U+200B, U+0085, U+3164, a lone combining
 * mark, NUL…), are no secret and cannot be typed back from what a person
 * sees.
 *
 * @example hasVisibleCharacter("\u200B".repeat(12)) // false
 */
export const hasVisibleCharacter = (password: string): boolean => [...password].some((ch) => VISIBLE.test(ch) && !BLANK.test(ch));

const INVISIBLE = /[\p{Cc}\p{Cf}]/u;

/**
 * The password's length as a person types it: characters (code points), not
 * counting control, formatting (U+200B and the like) or blank characters, so
 * eleven zero-width spaces and a "!" are one character, not twelve.
 *
 * @example countedLength("\u200B".repeat(11) + "!") // 1
 */
export const countedLength = (password: string): number => [...password].filter((ch) => !INVISIBLE.test(ch) && !BLANK.test(ch)).length;

const toB64 = (bytes: Uint8Array): string => btoa(String.fromCharCode(...bytes));
const fromB64 = (s: string): Uint8Array<ArrayBuffer> => Uint8Array.from(atob(s), (ch) => ch.charCodeAt(0));

export type PasswordHash = { hash: string; salt: string; iterations: number };

async function derive(password: string, salt: Uint8Array<ArrayBuffer>, iterations: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(password), "PBKDF2", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations }, key, 256);
  return new Uint8Array(bits);
}

export async function hashPassword(password: string, iterations = PBKDF2_ITERATIONS): Promise<PasswordHash> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  return { hash: toB64(await derive(password, salt, iterations)), salt: toB64(salt), iterations };
}

export async function verifyPassword(password: string, stored: PasswordHash): Promise<boolean> {
  const actual = await derive(password, fromB64(stored.salt), stored.iterations);
  return timingSafeEqual(actual, fromB64(stored.hash));
}

/** Constant-time comparison: the time taken does not depend on where the bytes differ. */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length;
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) diff |= (a[i % a.length] ?? 0) ^ (b[i % b.length] ?? 0);
  return diff === 0;
}

/**
 * A stored hash of a random password, verified against when the e-mail is
 * unknown so that login takes the same time whether or not the user exists.
 */
export const DUMMY_HASH: PasswordHash = {
  hash: "mBq7l0hXz3mYgq5mJ6yQm8l1N9pXG4pX2d8i0p1b7yA=",
  salt: "c3ZjLWNyZWRpdC1kdW1teQ==",
  iterations: PBKDF2_ITERATIONS,
};
