import { and, lt, eq } from "drizzle-orm";
import { merchantName } from "../domain/plain-text.ts";
import { walletSessionChallenges } from "../../db/schema/wallet-session-challenges.ts";
import { unauthorized, validationError } from "../domain/errors.ts";
import { isUuid, newId } from "../domain/ids.ts";
import { walletFor } from "./credit-lines.ts";
import type { VerbDeps } from "../verbs.ts";
import type { ProgramContext } from "./program-context.ts";
import { verifyWalletProof, type WalletProofDeps } from "./wallet-proof.ts";

/**
 * Wallet sessions: proof that the caller controls a wallet, so that the embed
 * calls that describe a wallet's credit (eligibility, bootstrap, quote)
 * answer exactly only to its owner, never to whoever types its address.
 *
 * Both the challenge and the session are stateless: HMAC-SHA256 under a key
 * derived from the embed worker's `SECRETS_KEY`, bound to tenant, program and
 * wallet, expiring on the tenant's clock. A challenge is single use: the
 * first session it opens records it (`wallet_session_challenges`).
 */
export const WALLET_SESSION_HEADER = "x-svc-wallet-session";
export const WALLET_SESSION_CHALLENGE_TTL_MS = 5 * 60_000;
export const WALLET_SESSION_TTL_MS = 60 * 60_000;

const encoder = new TextEncoder();
const b64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
/** Strict: only the one canonical encoding of the bytes (no padding bits set), so a token has exactly one spelling. */
const unb64url = (s: string): Uint8Array<ArrayBuffer> | null => {
  if (!/^[A-Za-z0-9_-]+$/.test(s)) return null;
  try {
    const bytes = Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
    return b64url(bytes) === s ? bytes : null;
  } catch {
    return null;
  }
};

const keys = new Map<string, Promise<CryptoKey>>();

/** The HMAC key of wallet sessions: HMAC(SECRETS_KEY, label), so it is no other use's key. */
function sessionKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = (async () => {
      const root = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
      const derived = await crypto.subtle.sign("HMAC", root, encoder.encode("svc-credit/embed/wallet-session/v1"));
      return crypto.subtle.importKey("raw", derived, { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
    })();
    keys.set(secret, key);
  }
  return key;
}

/** What a MAC covers: a purpose and the values it binds, one per line (none contains a newline). */
const macInput = (purpose: "challenge" | "session", program: ProgramContext, wallet: string, ...rest: string[]) =>
  encoder.encode([purpose, program.tenant.id, program.program.id, wallet, ...rest].join("\n"));

async function mac(secret: string, data: Uint8Array<ArrayBuffer>): Promise<string> {
  return b64url(new Uint8Array(await crypto.subtle.sign("HMAC", await sessionKey(secret), data)));
}

/** Constant-time check of a MAC (WebCrypto's verify). */
async function macValid(secret: string, data: Uint8Array<ArrayBuffer>, given: string): Promise<boolean> {
  const bytes = unb64url(given);
  return bytes !== null && crypto.subtle.verify("HMAC", await sessionKey(secret), bytes, data);
}

/** The text the wallet signs: human-readable, naming merchant, wallet, chain, program, challenge and expiry. */
function sessionMessage(program: ProgramContext, wallet: string, nonce: string, expiresAt: Date): string {
  const merchant = merchantName(program.settings.branding.companyName, program.tenant.name);
  return [
    `Sign in to ${merchant} credit with your wallet.`,
    "",
    `This proves that you control this wallet, so that ${merchant}'s credit widget may show you your credit line. It is not a transaction and moves no funds.`,
    "",
    `Wallet: ${wallet}`,
    `Chain: ${program.chain}`,
    `Program: ${program.program.id}`,
    `Challenge: ${nonce}`,
    `Expires: ${expiresAt.toISOString()}`,
  ].join("\n");
}

/**
 * A wallet-session challenge for the wallet: `{ id, message, expiresAt }`,
 * valid 5 minutes on the tenant's clock. The id carries its nonce and expiry
 * and their MAC, so nothing is stored until a signature uses it.
 */
export async function issueWalletSessionChallenge(
  { sessionSecret: secret }: { sessionSecret: string },
  { program, walletAddress, now }: { program: ProgramContext; walletAddress: string; now: Date },
) {
  const wallet = walletFor(program.chain, walletAddress);
  const nonce = newId();
  const expiresAt = new Date(now.getTime() + WALLET_SESSION_CHALLENGE_TTL_MS);
  const exp = String(expiresAt.getTime());
  const id = `${nonce}.${exp}.${await mac(secret, macInput("challenge", program, wallet, nonce, exp))}`;
  return { id, message: sessionMessage(program, wallet, nonce, expiresAt), expiresAt: expiresAt.toISOString() };
}

export type OpenWalletSessionInput = {
  walletAddress: string;
  challengeId: string;
  walletSignature: string;
  publicKey?: string;
  timestamp?: number;
  domain?: string;
};

/**
 * Opens a wallet session: the challenge must be this program's and wallet's
 * (else 400, the same for a forged id), unexpired and unused, and the
 * signature the wallet's over its message (the checks of accept, through
 * `verifyWalletProof`). The challenge is used by the first signature that
 * verifies. Returns `{ token, expiresAt }`, valid 1 hour on the tenant's
 * clock for this program and wallet only.
 */
export async function openWalletSession(
  deps: Pick<VerbDeps, "db" | "clock"> & { sessionSecret: string } & WalletProofDeps,
  { program, now, ...input }: OpenWalletSessionInput & { program: ProgramContext; now: Date },
) {
  const wallet = walletFor(program.chain, input.walletAddress);
  const [nonce = "", exp = "", given = "", ...extra] = input.challengeId.split(".");
  const genuine =
    extra.length === 0 &&
    isUuid(nonce) &&
    /^\d{1,15}$/.test(exp) &&
    (await macValid(deps.sessionSecret, macInput("challenge", program, wallet, nonce, exp), given));
  if (!genuine) throw validationError(["challengeId: no such challenge for this program and wallet"]);
  const expiresAt = new Date(Number(exp));
  if (now.getTime() >= expiresAt.getTime()) throw validationError(["challengeId: the challenge has expired"]);

  const proof = { ...input, address: wallet, message: sessionMessage(program, wallet, nonce, expiresAt) };
  const bad = await verifyWalletProof(deps, { program, proof, now });
  if (bad) throw validationError([bad]);

  // Single use: the first verified signature records the challenge; records past expiry are pruned, on the system
  // clock: a sandbox clock runs ahead of it, so pruning by a sandbox program's `now` deleted the records of the
  // tenant's live challenges still valid, and a used one opened a second session (an audit).
  const [, used] = await deps.db.batch([
    deps.db
      .delete(walletSessionChallenges)
      .where(and(eq(walletSessionChallenges.tenantId, program.tenant.id), lt(walletSessionChallenges.expiresAt, deps.clock.now()))),
    deps.db
      .insert(walletSessionChallenges)
      .values({ id: nonce, tenantId: program.tenant.id, expiresAt, usedAt: now })
      .onConflictDoNothing()
      .returning({ id: walletSessionChallenges.id }),
  ]);
  if (used.length === 0) throw validationError(["challengeId: the challenge was already used"]);

  const sessionExpiresAt = new Date(now.getTime() + WALLET_SESSION_TTL_MS);
  const sessionExp = String(sessionExpiresAt.getTime());
  const token = `v1.${sessionExp}.${await mac(deps.sessionSecret, macInput("session", program, wallet, sessionExp))}`;
  return { token, expiresAt: sessionExpiresAt.toISOString() };
}

/**
 * Whether the request proves control of the wallet: no token (undefined)
 * is no session; a token that is not a live session of this program and
 * wallet (forged, expired, another wallet's or another program's) is 401, so
 * the widget knows to open a new one instead of reading answers meant for
 * strangers.
 */
export async function hasWalletSession(
  { sessionSecret: secret }: { sessionSecret: string },
  { program, token, walletAddress, now }: { program: ProgramContext; token: string | undefined; walletAddress: string; now: Date },
): Promise<boolean> {
  if (token === undefined) return false;
  const wallet = walletFor(program.chain, walletAddress);
  const [version, exp = "", given = "", ...extra] = token.split(".");
  const live =
    version === "v1" &&
    extra.length === 0 &&
    /^\d{1,15}$/.test(exp) &&
    now.getTime() < Number(exp) &&
    (await macValid(secret, macInput("session", program, wallet, exp), given));
  if (!live)
    throw unauthorized(
      "The wallet session is not valid for this wallet (forged, expired, or another wallet's): open one with POST /v1/embed/:embedKey/wallet-session",
    );
  return true;
}
