import { and, asc, eq, isNotNull, isNull, sql } from "drizzle-orm";
import type { EventEnvelope } from "../../db/schema/events.ts";
import { tenants } from "../../db/schema/tenants.ts";
import { wallets, type WalletRow } from "../../db/schema/wallets.ts";
import { newId } from "../domain/ids.ts";
import { minuteTurn, windowOfTurn } from "../domain/turns.ts";
import { eventInsertIf } from "../events/loan-events.ts";
import { walletView } from "./wallet-view.ts";
import type { VerbDeps } from "../verbs.ts";

/**
 * GAS wallets one run reads at most: a balance read is up to 2 RPC calls (the
 * native balance and the token's), within an invocation's 1,000 subrequests.
 * More are read in turns (shared/domain/turns.ts), each within
 * ceil(wallets / 300) minutes; before, every run read them all, and past the
 * budget the wallets last in order never alerted.
 */
export const GAS_WALLETS_PER_RUN = 300;

export type GasCheckReport = { checked: number; unread: number; alerted: number; rearmed: number };

/**
 * The gas alarm of DECISIONS.md "Live wallets": every verified GAS wallet of
 * a certified tenant with a threshold whose native balance the chain port
 * can read is compared with it, at most `maxWallets` a run, in turns (an
 * unverified one may be anyone's address: an audit had a new sandbox tenant
 * make the job read and alert on a stranger's wallet). Under it, `wallet.gas_low` is recorded once per dip: the wallet is
 * marked with the event's id in the same batch as the event's insert, which
 * is written only if the mark took (so two overlapping ticks record one
 * event). At or above it, the mark is cleared and the next dip alerts
 * again. The event goes out through the outbox like every other: webhooks,
 * the dashboard notification and the owner's e-mail.
 *
 * A balance the port cannot read (no live adapter yet, RPC down) changes
 * nothing. Balances are real-chain facts, so the system clock dates the event.
 */
export async function checkGasWallets(
  { db, chain, clock }: Pick<VerbDeps, "db" | "chain" | "clock">,
  { maxWallets = GAS_WALLETS_PER_RUN }: { maxWallets?: number } = {},
): Promise<GasCheckReport> {
  const report: GasCheckReport = { checked: 0, unread: 0, alerted: 0, rearmed: 0 };
  if (!chain.balances) return report;
  const candidates: WalletRow[] = await db
    .select()
    .from(wallets)
    .where(
      and(
        eq(wallets.role, "GAS"),
        isNull(wallets.deletedAt),
        // Verified wallets only: anyone may add any address unverified, and each one read is an RPC call and a live alert.
        isNotNull(wallets.verifiedAt),
        isNotNull(wallets.gasThreshold),
        // Of certified tenants: only they fund live, and a free signup's own verified wallets would cost RPC calls too.
        sql`EXISTS (SELECT 1 FROM ${tenants} WHERE ${tenants.id} = ${wallets.tenantId} AND ${tenants.certifiedAt} IS NOT NULL)`,
      ),
    )
    .orderBy(asc(wallets.id));
  for (const wallet of windowOfTurn(candidates, maxWallets, minuteTurn(clock.now()))) {
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
  return report;
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
