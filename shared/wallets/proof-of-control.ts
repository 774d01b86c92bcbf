import { and, eq, gt, isNull, sql } from "drizzle-orm";
import { walletChallenges, wallets } from "../../db/schema/wallets.ts";
import { apiAgreementDomains } from "../agreements/ton-connect-domains.ts";
import { verifyWalletSignature, type TonSignDataFields } from "../agreements/verify-wallet-signature.ts";
import { validationError } from "../domain/errors.ts";
import { newId } from "../domain/ids.ts";
import type { VerbDeps } from "../verbs.ts";
import { loadWallet, readBalances, type WalletWithBalances } from "./wallet-verbs.ts";

/** How long a proof-of-control challenge may be signed for. */
export const WALLET_CHALLENGE_TTL_MS = 5 * 60 * 1000;

/**
 * The text a wallet signs to prove control: human-readable, so the person
 * holding the key sees exactly what they vouch for (tenant, chain, role,
 * address), and naming the challenge id and expiry, so a signature proves
 * this one request and no other.
 */
export function walletChallengeMessage(input: {
  tenant: { id: string; name: string };
  chain: string;
  role: string;
  address: string;
  challengeId: string;
  expiresAt: Date;
}): string {
  return [
    "svc credit: proof of wallet control",
    `Tenant: ${input.tenant.name} (${input.tenant.id})`,
    `Chain: ${input.chain}`,
    `Role: ${input.role}`,
    `Address: ${input.address}`,
    `Challenge: ${input.challengeId}`,
    `Expires: ${input.expiresAt.toISOString()}`,
    "Signing this proves you control this address. It moves no funds and grants no spending rights.",
  ].join("\n");
}

/**
 * Issues a single-use challenge for one of the tenant's wallets, valid 5
 * minutes (DECISIONS.md "Live wallets"). `now` is the real time: the
 * challenge is signed by a real wallet, on a real clock.
 */
export async function createWalletChallenge(
  { db }: Pick<VerbDeps, "db">,
  input: { tenant: { id: string; name: string }; id: string; now: Date },
): Promise<{ id: string; message: string; expiresAt: Date }> {
  const wallet = await loadWallet(db, input.tenant.id, input.id);
  const challengeId = newId();
  const expiresAt = new Date(input.now.getTime() + WALLET_CHALLENGE_TTL_MS);
  const message = walletChallengeMessage({ tenant: input.tenant, chain: wallet.chain, role: wallet.role, address: wallet.address, challengeId, expiresAt });
  await db.insert(walletChallenges).values({
    id: challengeId,
    tenantId: input.tenant.id,
    walletId: wallet.id,
    message,
    expiresAt,
    usedAt: null,
    createdAt: input.now,
  });
  return { id: challengeId, message, expiresAt };
}

export type VerifyWalletInput = {
  tenantId: string;
  id: string;
  challengeId: string;
  signature: string;
  /** TON Connect `signData` fields; ignored on EVM. */
  ton?: Partial<TonSignDataFields>;
  /** The real time (see `createWalletChallenge`). */
  now: Date;
};

/**
 * Checks the wallet's signature of one of its challenges with the one
 * verifier of wallet signatures (EIP-191 on EVM, TON Connect `signData` on
 * TON, whose `domain` must be the widget host or one of the tenant's widget
 * origins) and marks the wallet verified. The challenge is consumed only by
 * a good signature, atomically with the wallet's mark, so of two racing
 * verifications one wins and the other answers "already used". A bad
 * signature leaves the wallet as it was: 400 naming the field.
 */
export async function verifyWalletControl(
  { db, chain, widgetHost }: Pick<VerbDeps, "db" | "chain"> & { widgetHost?: string | null },
  input: VerifyWalletInput,
): Promise<WalletWithBalances> {
  const wallet = await loadWallet(db, input.tenantId, input.id);
  const [challenge] = await db
    .select()
    .from(walletChallenges)
    .where(and(eq(walletChallenges.id, input.challengeId), eq(walletChallenges.walletId, wallet.id), eq(walletChallenges.tenantId, input.tenantId)))
    .limit(1);
  if (!challenge) throw validationError(["challengeId: is not a challenge issued for this wallet (POST /v1/wallets/{id}/challenge)"]);
  if (challenge.usedAt) throw validationError(["challengeId: has already been used; ask for a new challenge"]);
  if (challenge.expiresAt.getTime() <= input.now.getTime())
    throw validationError(["challengeId: has expired (a challenge is valid 5 minutes); ask for a new challenge"]);

  const allowedDomains = wallet.chain === "TON" ? await apiAgreementDomains(db, input.tenantId, widgetHost) : [];
  const result = await verifyWalletSignature(
    { contracts: chain },
    {
      chain: wallet.chain,
      address: wallet.address,
      message: challenge.message,
      signature: input.signature,
      ton: input.ton ?? null,
      allowedDomains,
      now: input.now,
    },
  );
  if (!result.ok) {
    // The verifier names its own field "walletSignature"; this route's field is `signature`.
    throw validationError([result.reason.replace(/^walletSignature:/, "signature:")]);
  }

  const [consumed] = await db.batch([
    db
      .update(walletChallenges)
      .set({ usedAt: input.now })
      .where(and(eq(walletChallenges.id, challenge.id), isNull(walletChallenges.usedAt), gt(walletChallenges.expiresAt, input.now)))
      .returning({ id: walletChallenges.id }),
    db
      .update(wallets)
      .set({ verifiedAt: input.now, updatedAt: input.now })
      .where(
        and(
          eq(wallets.id, wallet.id),
          isNull(wallets.deletedAt),
          sql`EXISTS (SELECT 1 FROM ${walletChallenges} WHERE ${walletChallenges.id} = ${challenge.id} AND ${walletChallenges.usedAt} = ${input.now.getTime()})`,
        ),
      ),
  ]);
  if (consumed.length !== 1) throw validationError(["challengeId: has already been used; ask for a new challenge"]);
  const verified = await loadWallet(db, input.tenantId, wallet.id);
  return { ...verified, balances: await readBalances(chain, verified) };
}
