import { and, asc, eq, isNotNull, isNull } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { liquidityPools } from "../../db/schema/liquidity-pools.ts";
import { signers, wallets } from "../../db/schema/wallets.ts";
import { chainConfig } from "../chains/chain-config.ts";
import { newId } from "../domain/ids.ts";
import type { Chain } from "../domain/rails.ts";
import type { PoolRow } from "./pools.ts";

const MAX_UNITS = BigInt(Number.MAX_SAFE_INTEGER);

/** Who sends a live loan's principal, or why nobody can yet (the loan waits with this reason). */
export type LiveSender = { ok: true; address: string } | { ok: false; reason: string };

/**
 * The sender of a live loan on `chain` (DECISIONS.md "Live wallets"): the
 * tenant's verified DISBURSEMENT wallet on that chain for which the operator
 * installed a signer (the oldest such wallet, so the choice is stable). A
 * wallet that is unverified, deleted, or has no signer never funds.
 */
export async function liveSender(db: Db, tenantId: string, chain: Chain): Promise<LiveSender> {
  const disbursement = await db
    .select({ address: wallets.address, verifiedAt: wallets.verifiedAt, signerId: signers.id })
    .from(wallets)
    .leftJoin(signers, and(eq(signers.tenantId, wallets.tenantId), eq(signers.chain, wallets.chain), eq(signers.address, wallets.address)))
    .where(and(eq(wallets.tenantId, tenantId), eq(wallets.chain, chain), eq(wallets.role, "DISBURSEMENT"), isNull(wallets.deletedAt)))
    .orderBy(asc(wallets.createdAt), asc(wallets.id));
  const ready = disbursement.find((w) => w.verifiedAt !== null && w.signerId !== null);
  if (ready) return { ok: true, address: ready.address };
  if (disbursement.length === 0) return { ok: false, reason: `no DISBURSEMENT wallet on ${chain}: add one with POST /v1/wallets and verify it` };
  if (!disbursement.some((w) => w.verifiedAt !== null)) {
    return { ok: false, reason: `the DISBURSEMENT wallet on ${chain} is not verified: sign its challenge (POST /v1/wallets/:id/challenge, then /verify)` };
  }
  return { ok: false, reason: `no signer is installed for the verified DISBURSEMENT wallet on ${chain}: the platform operator installs it` };
}

/**
 * Whether `address` may still send a live loan's principal: the tenant's
 * verified DISBURSEMENT wallet on `chain`, not deleted, with an installed
 * signer. A loan that reserved with it follows its transfer either way; one
 * whose sender may no longer send makes no new attempt.
 */
export async function mayStillSend(db: Db, tenantId: string, chain: Chain, address: string): Promise<boolean> {
  const [row] = await db
    .select({ id: wallets.id })
    .from(wallets)
    .innerJoin(signers, and(eq(signers.tenantId, wallets.tenantId), eq(signers.chain, wallets.chain), eq(signers.address, wallets.address)))
    .where(
      and(
        eq(wallets.tenantId, tenantId),
        eq(wallets.chain, chain),
        eq(wallets.role, "DISBURSEMENT"),
        eq(wallets.address, address),
        isNull(wallets.deletedAt),
        isNotNull(wallets.verifiedAt),
      ),
    )
    .limit(1);
  return !!row;
}

/**
 * The tenant's live pool on `chain`, created on first use, with `available`
 * set to the DISBURSEMENT wallet's on-chain stablecoin balance just read, so
 * the reservation that follows sees headroom = balance − principal reserved
 * for live loans in flight. A transfer mined but not yet deep enough is out
 * of the balance and still reserved, so until it confirms headroom is
 * understated by it: loans wait (AWAITING_LIQUIDITY) and the retry job funds
 * them after, which is the safe side. Adding such transfers back would need
 * to know which are mined: one broadcast but not mined is still in the
 * balance, and adding it back let an audit reserve four 600.00 loans from a
 * 1,000.00 wallet (three reverted, paying gas). The confirmation's commit
 * never takes `available` below zero (fund-loan.ts), so a refresh that read
 * the balance net of a transfer cannot leave its loan stuck. The chain
 * itself refuses a transfer the wallet cannot cover, which releases the
 * reservation and leaves the loan to the retry job.
 */
export async function refreshLivePool(db: Db, input: { tenantId: string; chain: Chain; balance: bigint; now: Date }): Promise<PoolRow> {
  // Amounts are stored as safe integers; a balance beyond that (9 billion USDC) lends as if it were that.
  const available = input.balance > MAX_UNITS ? MAX_UNITS : input.balance;
  const [pool] = await db
    .insert(liquidityPools)
    .values({
      id: newId(),
      tenantId: input.tenantId,
      mode: "live",
      chain: input.chain,
      stablecoin: chainConfig(input.chain).token.symbol,
      available,
      reserved: 0n,
      // The wallet's balance is the merchant's to watch (GET /v1/wallets); no liquidity.low for live pools.
      lowThreshold: 0n,
      createdAt: input.now,
      updatedAt: input.now,
    })
    .onConflictDoUpdate({
      target: [liquidityPools.tenantId, liquidityPools.chain],
      targetWhere: isNotNull(liquidityPools.chain),
      set: { available, updatedAt: input.now },
    })
    .returning();
  return pool!;
}
