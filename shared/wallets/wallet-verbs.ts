import { and, eq, isNull, sql } from "drizzle-orm";
import { insertIf } from "../../db/guarded-writes.ts";
import type { Db } from "../../db/create-db.ts";
import { isUniqueViolation } from "../../db/errors.ts";
import { newestFirst, pageOf } from "../../db/pagination.ts";
import { wallets, type WalletRow } from "../../db/schema/wallets.ts";
import type { ChainPort, WalletBalances } from "../chains/chain-port.ts";
import { canonicalAddress } from "../domain/addresses.ts";
import { conflict, notFound, validationError } from "../domain/errors.ts";
import { newId } from "../domain/ids.ts";
import type { Chain } from "../domain/rails.ts";
import { isLiveWalletChain, LIVE_WALLET_CHAINS, nativeDecimals, parseBaseUnits, type WalletRole } from "../domain/wallets.ts";
import type { VerbDeps } from "../verbs.ts";

/** A wallet with what the chain says it holds; `balances` null: not read (the port cannot read that chain). */
export type WalletWithBalances = WalletRow & { balances: WalletBalances | null };

/**
 * The balances of a wallet through the chain port's optional `balances`.
 * Null when the port has no such capability (every deployment until the live
 * adapters exist) or the chain could not be asked: a wallet page must still
 * show the wallet when an RPC is down, and null says "not read", never 0.
 */
export async function readBalances(chain: Pick<ChainPort, "balances">, wallet: { chain: Chain; address: string }): Promise<WalletBalances | null> {
  if (!chain.balances) return null;
  try {
    return await chain.balances(wallet.chain, wallet.address);
  } catch {
    return null;
  }
}

const withBalances = async (chain: Pick<ChainPort, "balances">, row: WalletRow): Promise<WalletWithBalances> => ({
  ...row,
  balances: await readBalances(chain, row),
});

/** The `chain` and `address` of a request, checked and canonical; field-named 400s otherwise. */
function checkChainAndAddress(chain: string, address: string): { chain: Chain; address: string } {
  if (!isLiveWalletChain(chain)) {
    throw validationError([
      `chain: must be a live chain (${LIVE_WALLET_CHAINS.join(", ")}); ${chain} is a sandbox chain, which is simulated and needs no wallet`,
    ]);
  }
  const canonical = canonicalAddress(chain, address);
  if (!canonical.ok) throw validationError([`address: ${canonical.reason}`]);
  return { chain, address: canonical.address };
}

const live = (tenantId: string, id: string) => and(eq(wallets.id, id), eq(wallets.tenantId, tenantId), isNull(wallets.deletedAt));

/**
 * The most wallets (not deleted) a tenant holds per chain and role. Every
 * COLLECTIONS wallet joins the settlement listener's reads of its chain for
 * all tenants (an EVM log filter, a TON poll per wallet), so one tenant must
 * not add them by the thousand.
 */
export const MAX_WALLETS_PER_ROLE = 10;

/**
 * Adds a wallet on a live chain. One row per (chain, role, address): the
 * same address may hold several roles (one row each), the same role twice
 * is 409. The address is stored canonical, so two spellings of one address
 * are one wallet. New wallets are unverified until a signed challenge. At
 * most `MAX_WALLETS_PER_ROLE` per chain and role (409), counted by the
 * insert itself.
 */
export async function createWallet(
  { db, chain: port }: Pick<VerbDeps, "db" | "chain">,
  input: { tenantId: string; chain: string; role: WalletRole; address: string; now: Date },
): Promise<WalletWithBalances> {
  const { chain, address } = checkChainAndAddress(input.chain, input.address);
  const row: WalletRow = {
    id: newId(),
    tenantId: input.tenantId,
    chain,
    role: input.role,
    address,
    verifiedAt: null,
    gasThreshold: null,
    gasLowEventId: null,
    createdAt: input.now,
    updatedAt: input.now,
    deletedAt: null,
  };
  const underCap = sql`(SELECT count(*) FROM ${wallets} WHERE ${wallets.tenantId} = ${input.tenantId} AND ${wallets.chain} = ${chain} AND ${wallets.role} = ${input.role} AND ${wallets.deletedAt} IS NULL) < ${MAX_WALLETS_PER_ROLE}`;
  let inserted: { id: string }[];
  try {
    inserted = await insertIf(db, wallets, row, underCap).returning({ id: wallets.id });
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict(`This tenant already has ${address} as its ${input.role} wallet on ${chain}`);
    throw error;
  }
  if (inserted.length === 0) {
    throw conflict(
      `This tenant already has ${MAX_WALLETS_PER_ROLE} ${input.role} wallets on ${chain}, the most it may hold; delete one (DELETE /v1/wallets/:id) first`,
    );
  }
  return withBalances(port, row);
}

/** The tenant's wallets, newest first (keyset pagination), each with its balances; deleted ones are left out. */
export async function listWallets({ db, chain }: Pick<VerbDeps, "db" | "chain">, input: { tenantId: string; limit: number; cursor?: string }) {
  const page = newestFirst(wallets, input.cursor);
  const rows = await db
    .select()
    .from(wallets)
    .where(and(eq(wallets.tenantId, input.tenantId), isNull(wallets.deletedAt), page.where))
    .orderBy(...page.orderBy)
    .limit(input.limit + 1);
  const { data, nextCursor } = pageOf(rows, input.limit);
  return { data: await Promise.all(data.map((w) => withBalances(chain, w))), nextCursor };
}

/** One live wallet row of the tenant; deleted or another tenant's: not found. */
export async function loadWallet(db: Db, tenantId: string, id: string): Promise<WalletRow> {
  const [row] = await db.select().from(wallets).where(live(tenantId, id)).limit(1);
  if (!row) throw notFound("Wallet");
  return row;
}

/** One wallet of the tenant with its balances. */
export async function getWallet({ db, chain }: Pick<VerbDeps, "db" | "chain">, input: { tenantId: string; id: string }): Promise<WalletWithBalances> {
  return withBalances(chain, await loadWallet(db, input.tenantId, input.id));
}

/**
 * Sets (a decimal string of native units, e.g. "0.5") or clears (null) a GAS
 * wallet's threshold. Other roles have none: 400. A new threshold re-arms the
 * alert, so the next cron tick judges the balance against it afresh.
 */
export async function updateWallet(
  { db, chain }: Pick<VerbDeps, "db" | "chain">,
  input: { tenantId: string; id: string; gasThreshold: string | null; now: Date },
): Promise<WalletWithBalances> {
  const wallet = await loadWallet(db, input.tenantId, input.id);
  let threshold: string | null = null;
  if (input.gasThreshold !== null) {
    if (wallet.role !== "GAS") throw validationError([`gasThreshold: only a GAS wallet has a gas threshold; this wallet is ${wallet.role}`]);
    const parsed = parseBaseUnits(input.gasThreshold, nativeDecimals(wallet.chain));
    if (!parsed.ok) throw validationError([`gasThreshold: ${parsed.reason}`]);
    if (parsed.units === 0n) throw validationError(["gasThreshold: must be greater than 0 (null clears it)"]);
    threshold = parsed.units.toString();
  }
  // The alarm re-arms only when the threshold changes: saving the same one again within a dip is no new dip.
  const [row] = await db
    .update(wallets)
    .set({
      gasThreshold: threshold,
      gasLowEventId: sql`CASE WHEN ${wallets.gasThreshold} IS ${threshold} THEN ${wallets.gasLowEventId} ELSE NULL END`,
      updatedAt: input.now,
    })
    .where(live(input.tenantId, input.id))
    .returning();
  if (!row) throw notFound("Wallet");
  return withBalances(chain, row);
}

/** Soft-deletes a wallet: it leaves every list and answers 404; deleting it again: not found. */
export async function deleteWallet({ db }: Pick<VerbDeps, "db">, input: { tenantId: string; id: string; now: Date }): Promise<void> {
  const [row] = await db
    .update(wallets)
    .set({ deletedAt: input.now, updatedAt: input.now })
    .where(live(input.tenantId, input.id))
    .returning({ id: wallets.id });
  if (!row) throw notFound("Wallet");
}
