import { and, asc, eq, gt, isNotNull, isNull, sql } from "drizzle-orm";
import type { EventEnvelope } from "../../db/schema/events.ts";
import { wallets, type WalletRow } from "../../db/schema/wallets.ts";
import { newId } from "../domain/ids.ts";
import { eventInsertIf } from "../events/loan-events.ts";
import { walletView } from "./wallet-view.ts";
import type { VerbDeps } from "../verbs.ts";

/** GAS wallets read per page; the job pages through all of them each tick. */
export const GAS_CHECK_PAGE = 100;

export type GasCheckReport = { checked: number; unread: number; alerted: number; rearmed: number };

/**
 * The gas alarm of DECISIONS.md "Live wallets": every verified GAS wallet
 * with a threshold whose native balance the chain port can read is compared
 * with it (an unverified one may be anyone's address: an audit had a new
 * sandbox tenant make the job read and alert on a stranger's wallet). Under it, `wallet.gas_low` is recorded once per dip: the wallet is
 * marked with the event's id in the same batch as the event's insert, which
 * is written only if the mark took (so two overlapping ticks record one
 * event). At or above it, the mark is cleared and the next dip alerts
 * again. The event goes out through the outbox like every other: webhooks,
 * the dashboard notification and the owner's e-mail.
 *
 * A balance the port cannot read (no live adapter yet, RPC down) changes
 * nothing. Balances are real-chain facts, so the system clock dates the event.
 */
export async function checkGasWallets({ db, chain, clock }: Pick<VerbDeps, "db" | "chain" | "clock">): Promise<GasCheckReport> {
  const report: GasCheckReport = { checked: 0, unread: 0, alerted: 0, rearmed: 0 };
  if (!chain.balances) return report;
  let after = "";
  for (;;) {
    const page: WalletRow[] = await db
      .select()
      .from(wallets)
      // Verified wallets only: anyone may add any address unverified, and each one read is an RPC call and a live alert.
      .where(and(eq(wallets.role, "GAS"), isNull(wallets.deletedAt), isNotNull(wallets.verifiedAt), isNotNull(wallets.gasThreshold), gt(wallets.id, after)))
      .orderBy(asc(wallets.id))
      .limit(GAS_CHECK_PAGE);
    for (const wallet of page) {
      report.checked++;
      let balances: Awaited<ReturnType<NonNullable<typeof chain.balances>>>;
      try {
        balances = await chain.balances(wallet.chain, wallet.address);
      } catch {
        balances = null;
      }
      if (!balances) {
        report.unread++;
        continue;
      }
      const threshold = BigInt(wallet.gasThreshold!);
      if (balances.native >= threshold) {
        if (wallet.gasLowEventId === null) continue;
        const [cleared] = await db
          .update(wallets)
          .set({ gasLowEventId: null, updatedAt: clock.now() })
          .where(and(eq(wallets.id, wallet.id), isNotNull(wallets.gasLowEventId)))
          .returning({ id: wallets.id });
        if (cleared) report.rearmed++;
        continue;
      }
      if (wallet.gasLowEventId !== null) continue;
      if (await raiseGasLow(db, wallet, balances, clock.now())) report.alerted++;
    }
    if (page.length < GAS_CHECK_PAGE) return report;
    after = page[page.length - 1]!.id;
  }
}

async function raiseGasLow(
  db: Parameters<typeof eventInsertIf>[0],
  wallet: WalletRow,
  balances: { stablecoin: bigint; native: bigint },
  now: Date,
): Promise<boolean> {
  const envelope: EventEnvelope = {
    id: newId(),
    type: "wallet.gas_low",
    createdAt: now.toISOString(),
    tenantId: wallet.tenantId,
    data: { wallet: walletView(wallet, balances) },
    program: null,
    channel: null,
    // Wallets exist on live chains only.
    mode: "live",
  };
  const [marked] = await db.batch([
    db
      .update(wallets)
      .set({ gasLowEventId: envelope.id, updatedAt: now })
      // Only an armed, live wallet whose threshold is the one judged: a PUT in between re-judges on the next tick.
      .where(and(eq(wallets.id, wallet.id), isNull(wallets.gasLowEventId), isNull(wallets.deletedAt), eq(wallets.gasThreshold, wallet.gasThreshold!)))
      .returning({ id: wallets.id }),
    eventInsertIf(db, envelope, null, sql`EXISTS (SELECT 1 FROM ${wallets} WHERE ${wallets.id} = ${wallet.id} AND ${wallets.gasLowEventId} = ${envelope.id})`),
  ]);
  return marked.length === 1;
}
