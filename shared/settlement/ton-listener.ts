import { Address, type Transaction } from "@ton/core";
import { and, asc, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { loans } from "../../db/schema/loans.ts";
import { tonWalletBacklogs, tonWalletCursors, tonWalletReads } from "../../db/schema/ton.ts";
import { wallets } from "../../db/schema/wallets.ts";
import { jettonWalletOf } from "../chains/ton/jetton-reads.ts";
import type { TonNetwork } from "../chains/ton/ton-network.ts";
import type { VerbDeps } from "../verbs.ts";
import { classifyTonTransaction, type TonFinding } from "./classify-ton-transaction.ts";
import { MAX_STORABLE_UNITS } from "../domain/money.ts";
import { wholeSecondMs } from "../domain/pricing.ts";
import { minuteTurn, windowOfTurn } from "../domain/turns.ts";
import { listenedCollections } from "./collections-wallets.ts";
import { applyOrHold, dueHeldPayments, HELD_RETRY_PAGE, type HeldReport } from "./held-payments.ts";
import { recordUnmatched } from "./unmatched.ts";

export type TonListenerDeps = Pick<VerbDeps, "db" | "writer" | "clock"> & {
  network: TonNetwork;
  /** Pages one poll of a wallet reads at most (TON_MAX_PAGES); tests make backlogs with fewer. */
  maxPages?: number;
  /** Held payments this run may still try again, shared by every wallet it polls (pollTonCollections sets HELD_RETRY_PAGE). */
  heldBudget?: { left: number };
  /** The USDT jetton master (`settings.tokenAddress` of TON). */
  master: string;
  /** Wallets one run polls at most (TON_WALLETS_PER_RUN); tests take fewer. */
  maxWallets?: number;
};

/**
 * COLLECTIONS wallets one run polls at most: each costs a toncenter call and
 * about 3 D1 queries (more with a backlog), within the invocation's 1,000
 * subrequests beside the EVM chains' reads. More wallets than this are read
 * in turns, every wallet within ceil(wallets / 100) minutes.
 */
export const TON_WALLETS_PER_RUN = 100;

/** `backlog`: the waypoints left of a backlog larger than one poll reads (walkBack), when there is one. */
export type TonWalletReport = {
  tenantId: string;
  address: string;
  transactions: number;
  payments: number;
  unmatched: number;
  backlog?: number;
  error?: string;
} & HeldReport;

/** Transactions read per request, and how many requests one poll of a wallet makes at most (a larger backlog takes more polls: walkBack). */
export const TON_PAGE = 100;
export const TON_MAX_PAGES = 20;
/** A wallet's first poll reads back to a day before it was verified: no repayment instruction named it earlier. */
const FIRST_POLL_SLACK_SECONDS = 86_400;

/**
 * How long after a transaction toncenter may first list it (masterchain commit, then indexing; seconds as a rule): a
 * poll that started at P and read up to the newest transaction has read every one made before P less this.
 */
export const TON_READ_LAG_MS = 60_000;

type Cursor = { lt: bigint; hash: Buffer };

/**
 * Records that the wallet's transactions are all read up to `at` (only forward): its tenant's live TON loans can be
 * judged overdue or defaulted up to then (shared/sweeps/sweep-loans.ts).
 */
async function saveReadThrough(db: Db, tenantId: string, address: string, at: Date) {
  await db
    .insert(tonWalletReads)
    .values({ tenantId, address, readThroughAt: at })
    .onConflictDoUpdate({
      target: [tonWalletReads.tenantId, tonWalletReads.address],
      set: { readThroughAt: sql`MAX(${tonWalletReads.readThroughAt}, excluded.read_through_at)` },
    });
}

async function cursorOf(db: Db, tenantId: string, address: string): Promise<Cursor | null> {
  const [row] = await db
    .select({ lastLt: tonWalletCursors.lastLt, lastHash: tonWalletCursors.lastHash })
    .from(tonWalletCursors)
    .where(and(eq(tonWalletCursors.tenantId, tenantId), eq(tonWalletCursors.address, address)))
    .limit(1);
  return row ? { lt: BigInt(row.lastLt), hash: Buffer.from(row.lastHash, "hex") } : null;
}

async function saveCursor(db: Db, tenantId: string, address: string, tx: Transaction, now: Date) {
  const values = { lastLt: tx.lt.toString(), lastHash: tx.hash().toString("hex"), updatedAt: now };
  await db
    .insert(tonWalletCursors)
    .values({ tenantId, address, ...values })
    .onConflictDoUpdate({ target: [tonWalletCursors.tenantId, tonWalletCursors.address], set: values });
}

/** A backlog's waypoints, newest first (shared in ton_wallet_backlogs). */
async function waypointsOf(db: Db, tenantId: string, address: string): Promise<Cursor[]> {
  const [row] = await db
    .select({ waypoints: tonWalletBacklogs.waypoints })
    .from(tonWalletBacklogs)
    .where(and(eq(tonWalletBacklogs.tenantId, tenantId), eq(tonWalletBacklogs.address, address)))
    .limit(1);
  if (!row) return [];
  return (JSON.parse(row.waypoints) as { lt: string; hash: string }[]).map((w) => ({ lt: BigInt(w.lt), hash: Buffer.from(w.hash, "hex") }));
}

async function saveWaypoints(db: Db, tenantId: string, address: string, waypoints: Cursor[], now: Date) {
  const where = and(eq(tonWalletBacklogs.tenantId, tenantId), eq(tonWalletBacklogs.address, address));
  if (waypoints.length === 0) {
    await db.delete(tonWalletBacklogs).where(where);
    return;
  }
  const values = { waypoints: JSON.stringify(waypoints.map((w) => ({ lt: w.lt.toString(), hash: w.hash.toString("hex") }))), updatedAt: now };
  await db
    .insert(tonWalletBacklogs)
    .values({ tenantId, address, ...values })
    .onConflictDoUpdate({ target: [tonWalletBacklogs.tenantId, tonWalletBacklogs.address], set: values });
}

/**
 * One walk back through the wallet's transactions towards `cursor` (without
 * one, to `notBefore`), from `start` (a waypoint, itself included) or from
 * the newest, at most `maxPages` pages: TON lists an account's transactions
 * newest first, each page continuing from the last one (inclusive).
 * `reached`: the walk got to the cursor, and `transactions` are the ones
 * after it up to `start`, oldest first. Otherwise `oldest` is where the next
 * walk goes on from. A page shorter than asked that neither reaches the
 * cursor nor ends at the account's first transaction throws (the cursor
 * stays): toncenter can answer short pages, and taking one for the end of
 * the history would skip what lies between.
 */
async function walkBack(
  network: TonNetwork,
  owner: Address,
  input: { cursor: Cursor | null; notBefore: number; start: Cursor | undefined; maxPages: number },
): Promise<{ reached: true; transactions: Transaction[] } | { reached: false; oldest: Cursor }> {
  const { cursor, notBefore } = input;
  const out: Transaction[] = [];
  let from = input.start;
  for (let page = 0; page < input.maxPages; page++) {
    const txs = await network.transactions(owner, { limit: TON_PAGE, ...from });
    // From the second page on, the first transaction is the last one of the page before; a waypoint itself is unread.
    for (const tx of from && page > 0 ? txs.slice(1) : txs) {
      if (cursor ? tx.lt <= cursor.lt : tx.now < notBefore) return { reached: true, transactions: out.reverse() };
      out.push(tx);
    }
    const last = txs[txs.length - 1];
    if (!last) {
      if (from) throw new Error(`an empty page from ${from.lt} of ${owner.toRawString()}, before the cursor; the cursor is kept`);
      return { reached: true, transactions: out.reverse() };
    }
    if (last.prevTransactionLt === 0n) return { reached: true, transactions: out.reverse() };
    if (txs.length < TON_PAGE)
      throw new Error(`a page of ${txs.length} of ${TON_PAGE} transactions of ${owner.toRawString()} before the cursor; the cursor is kept`);
    from = { lt: last.lt, hash: last.hash() };
  }
  return { reached: false, oldest: from! };
}

/** Sends a USDT payment naming a loan of this tenant on TON to the loan's writer; keeps anything else as unmatched for the tenant. */
async function handle(deps: TonListenerDeps, tenantId: string, finding: TonFinding, report: TonWalletReport) {
  const now = deps.clock.now();
  const keep = async (reason: string, settles = true) => {
    report.unmatched++;
    const { payment } = finding;
    // A forged notification may claim any amount; the database stores up to 2^53 units exactly.
    const storable = payment.amount <= MAX_STORABLE_UNITS ? payment : { ...payment, amount: 0n };
    const why = storable === payment ? reason : `${reason}; it claims ${payment.amount} units, more than can be stored`;
    // One kept as 0 is never attributable: its 0 would be credited and the record spent.
    await recordUnmatched(deps, { payment: storable, reason: why, tenantId, now, settles: settles && storable === payment });
  };
  if (finding.kind === "unmatched") return keep(finding.reason, finding.settles ?? true);
  const { payment } = finding;
  if (payment.amount > MAX_STORABLE_UNITS) return keep("the amount is more than can be stored");
  const [loan] = await deps.db
    .select({ chain: loans.chain })
    .from(loans)
    .where(and(eq(loans.id, payment.loanId!), eq(loans.tenantId, tenantId)))
    .limit(1);
  // Another tenant's loan is, to this tenant's COLLECTIONS wallet, no loan at all.
  if (!loan) return keep("no loan with this id");
  if (loan.chain !== "TON") return keep(`the loan is on ${loan.chain}, not TON`);
  await deps.writer.run({ kind: "repayment", tenantId, loanId: payment.loanId!, payment });
  report.payments++;
}

/**
 * Applies one finding; a payment whose loan's writer (or anything on the way)
 * fails is held for a later poll instead, so the wallet's cursor moves on.
 * Anything unmatched is never held (a retry would take it for a USDT payment).
 */
function applyOrHoldTon(deps: TonListenerDeps, tenantId: string, finding: TonFinding, report: TonWalletReport, retry = false) {
  if (finding.kind !== "payment") return handle(deps, tenantId, finding, report);
  return applyOrHold(deps.db, { chain: "TON", tenantId }, { obs: finding.payment, blockHash: null }, () => handle(deps, tenantId, finding, report), report, {
    now: () => deps.clock.now(),
    retry,
  });
}

/**
 * Polls one tenant's COLLECTIONS wallet on TON from its (lt, hash) cursor:
 * every new incoming transaction, oldest first, is classified
 * (classifyTonTransaction) and applied, then the cursor moves past it.
 * A payment that cannot be applied is held and tried again at later polls
 * (the tenant's held payments are tried first). Idempotent: the loan's
 * writer skips a payment (tx hash) it settled before, and an unmatched
 * payment is kept once, so a repeated or overlapping poll never credits twice.
 */
export async function pollTonWallet(deps: TonListenerDeps, wallet: { tenantId: string; address: string; verifiedAt: Date }): Promise<TonWalletReport> {
  const report: TonWalletReport = { tenantId: wallet.tenantId, address: wallet.address, transactions: 0, payments: 0, unmatched: 0 };
  const startedAt = deps.clock.now();
  const owner = Address.parse(wallet.address);
  const master = Address.parse(deps.master);
  const budget = deps.heldBudget ?? { left: HELD_RETRY_PAGE };
  const due = budget.left > 0 ? await dueHeldPayments(deps.db, { chain: "TON", tenantId: wallet.tenantId }, deps.clock.now(), budget.left) : [];
  budget.left -= due.length;
  for (const { obs } of due) {
    await applyOrHoldTon(deps, wallet.tenantId, { kind: "payment", payment: obs }, report, true);
  }
  const cursor = await cursorOf(deps.db, wallet.tenantId, wallet.address);
  const notBefore = Math.floor(wallet.verifiedAt.getTime() / 1000) - FIRST_POLL_SLACK_SECONDS;
  // A backlog larger than one poll reads: walk on from its oldest waypoint; each walk that reaches the cursor applies what it read.
  const waypoints = await waypointsOf(deps.db, wallet.tenantId, wallet.address);
  const start = waypoints.at(-1);
  const walk = await walkBack(deps.network, owner, { cursor, notBefore, start, maxPages: deps.maxPages ?? TON_MAX_PAGES });
  if (!walk.reached) {
    await saveWaypoints(deps.db, wallet.tenantId, wallet.address, [...waypoints, walk.oldest], deps.clock.now());
    report.backlog = waypoints.length + 1;
    return report;
  }
  if (walk.transactions.length > 0) {
    const jettonWallet = await jettonWalletOf(deps.network, master, owner);
    for (const tx of walk.transactions) {
      for (const finding of classifyTonTransaction(tx, { owner, jettonWallet, master })) await applyOrHoldTon(deps, wallet.tenantId, finding, report);
      await saveCursor(deps.db, wallet.tenantId, wallet.address, tx, deps.clock.now());
      report.transactions++;
    }
  }
  if (start) {
    await saveWaypoints(deps.db, wallet.tenantId, wallet.address, waypoints.slice(0, -1), deps.clock.now());
    if (waypoints.length > 1) report.backlog = waypoints.length - 1;
  } else {
    // This walk started at the newest transaction and reached the cursor: everything listed when the poll began is
    // read (a backlog's last walk ends at a waypoint read by an earlier poll; the next poll, from the newest, says so).
    // Whole seconds, as every time a loan is judged at (pricing.ts wholeSecondMs): the sweep's query and its loan agree.
    await saveReadThrough(deps.db, wallet.tenantId, wallet.address, new Date(wholeSecondMs(startedAt.getTime() - TON_READ_LAG_MS)));
  }
  return report;
}

/**
 * The TON settlement listener: every verified COLLECTIONS wallet on TON of
 * every certified tenant (a deleted one for LISTEN_AFTER_DELETE_DAYS more:
 * collections-wallets.ts), each from its own cursor, once even if deleted
 * and added again, at most TON_WALLETS_PER_RUN a run, in turns. One wallet's failure (RPC down, a
 * page limit) is reported and does not stop the others; its cursor stays.
 *
 * @example const ton = liveChainSettings(env).TON; if (ton) await pollTonCollections({ db, writer, clock, network: toncenterNetwork(ton), master: ton.tokenAddress })
 */
export async function pollTonCollections(deps: TonListenerDeps): Promise<TonWalletReport[]> {
  const rows = await deps.db
    .select({ tenantId: wallets.tenantId, address: wallets.address, verifiedAt: wallets.verifiedAt })
    .from(wallets)
    .where(listenedCollections("TON", deps.clock.now()))
    .orderBy(asc(wallets.verifiedAt));
  // One poll per (tenant, address), from its first verification: a wallet deleted and added again is two rows.
  const once = new Map<string, (typeof rows)[number]>();
  for (const row of rows) if (!once.has(`${row.tenantId} ${row.address}`)) once.set(`${row.tenantId} ${row.address}`, row);
  const reports: TonWalletReport[] = [];
  // One run tries at most HELD_RETRY_PAGE held payments again, whichever wallets hold them (each tried is pushed back, so the rest come next).
  const run = { ...deps, heldBudget: deps.heldBudget ?? { left: HELD_RETRY_PAGE } };
  // At most TON_WALLETS_PER_RUN wallets a run, the next ones each minute (before, every wallet every run: past an
  // invocation's subrequests, the wallets verified last were never read).
  for (const row of windowOfTurn([...once.values()], deps.maxWallets ?? TON_WALLETS_PER_RUN, minuteTurn(deps.clock.now()))) {
    const wallet = { tenantId: row.tenantId, address: row.address, verifiedAt: row.verifiedAt! };
    try {
      reports.push(await pollTonWallet(run, wallet));
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      reports.push({ tenantId: wallet.tenantId, address: wallet.address, transactions: 0, payments: 0, unmatched: 0, error: message });
    }
  }
  return reports;
}
