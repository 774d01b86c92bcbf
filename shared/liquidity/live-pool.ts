import { and, asc, eq, isNotNull, isNull, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { liquidityPools } from "../../db/schema/liquidity-pools.ts";
import { loans } from "../../db/schema/loans.ts";
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
 * SQL: the principal of the pool's loans whose transfer is broadcast
 * (RESERVED with a `fundingTxHash`) but not yet confirmed. Once mined, such
 * a transfer is already out of the wallet's balance while the pool still
 * reserves it; `available` adds it back so it is not counted twice.
 */
const inFlight = () =>
  sql`(SELECT COALESCE(SUM(${loans.principal}), 0) FROM ${loans} WHERE ${loans.poolId} = ${liquidityPools.id} AND ${loans.fundingState} = 'RESERVED' AND ${loans.fundingTxHash} IS NOT NULL)`;

/**
 * The tenant's live pool on `chain`, created on first use, with `available`
 * refreshed from the DISBURSEMENT wallet's on-chain stablecoin balance just
 * read, plus the principal of its transfers broadcast and not yet confirmed
 * (`inFlight`), so the reservation that follows sees headroom = the money the
 * wallet holds beyond what its reservations will take. (Before, a transfer
 * mined but not yet deep enough was counted twice: out of the balance and in
 * `reserved`, which understated headroom and made its own confirmation
 * subtract it again, below zero.) A transfer broadcast but not yet mined is
 * still in the balance, so headroom may be overstated by it for a moment;
 * the chain itself refuses a transfer the wallet cannot cover, which
 * releases that reservation and leaves the loan to the retry job.
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
      set: { available: sql`MIN(${Number(available)} + ${inFlight()}, ${Number(MAX_UNITS)})` as unknown as bigint, updatedAt: input.now },
    })
    .returning();
  return pool!;
}
