import { markLedgerWritten } from "../settlement/listener.ts";
import { signAsBorrower } from "./sign-as-borrower.ts";
import { expect } from "bun:test";
import { and, eq } from "drizzle-orm";
import { encodeFunctionData, erc20Abi, getAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { liquidityPools } from "../../db/schema/liquidity-pools.ts";
import { CHAIN_CONFIG } from "../chains/chain-config.ts";
import { SVC_POOL_ABI } from "../chains/evm/svc-pool-abi.ts";
import { loanIdToBytes32 } from "../chains/loan-id.ts";
import { bearer } from "./fixtures.ts";
import { createTestApp, type TestApp } from "./harness.ts";
import { apiKey, sandboxTenant } from "./loan-fixtures.ts";
import {
  balanceOf,
  credit,
  decimal,
  expectedView,
  include,
  move,
  type MoneyModel,
  nextNonce,
  type PendingObservation,
  RAILS,
  type Rail,
  tenantNow,
  type Terms,
  units,
} from "./money-model.ts";

/**
 * The real side of the money model test (shared/settlement/money-model.test.ts):
 * the api app in-process over libSQL with its simulated ledgers, a sandbox
 * tenant lending on POLYGON_AMOY (USDC) and TON_TESTNET (USDT), the borrower's
 * wallet actions on the ledgers (through the sandbox helpers, which poll at
 * once, or straight onto the ledger for the listener's next poll), and the
 * invariants checked against the model after every step.
 */

export const EVM_POOL = getAddress(CHAIN_CONFIG.POLYGON_AMOY.pool!);
const EVM_TOKEN = getAddress(CHAIN_CONFIG.POLYGON_AMOY.token.address);
export const TON_WALLET = CHAIN_CONFIG.TON_TESTNET.settlementWallet!;
export const TON_TOKEN = CHAIN_CONFIG.TON_TESTNET.token.address;
/** Another jetton than USDT, with the same decimals: a transfer of it repays nothing. */
export const OTHER_JETTON = `0:${"ab".repeat(32)}`;
/** Where each rail's repayments land in the sandbox: the simulated pool (EVM), the settlement wallet (TON). */
const RECEIVER: Record<Rail, string> = { POLYGON_AMOY: EVM_POOL, TON_TESTNET: TON_WALLET };
const TOKEN: Record<Rail, string> = { POLYGON_AMOY: EVM_TOKEN, TON_TESTNET: TON_TOKEN };
export const NETWORK: Record<Rail, "POLYGON" | "TON"> = { POLYGON_AMOY: "POLYGON", TON_TESTNET: "TON" };

export type World = {
  t: TestApp;
  key: string;
  /** The owner's dashboard session (merchant configuration, attribution). */
  token: string;
  tenantId: string;
  configId: Record<Rail, string>;
  productId: Record<Rail, string>;
  /** The EVM borrowers' keys, by address. */
  accounts: Map<string, PrivateKeyAccount>;
  /** A wallet of the tenant's sandbox that is no receiver, per rail. */
  elsewhere: Record<Rail, string>;
};

// --- driving the real system ------------------------------------------------------------

export async function ok<T = any>(res: Promise<{ status: number; body: T }>, status = 200, what = "request"): Promise<T> {
  const r = await res;
  if (r.status !== status) throw new Error(`${what}: expected ${status}, got ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

export async function faucet(m: MoneyModel, w: World, rail: Rail, address: string, amount: bigint) {
  const res = await ok(
    w.t.request("POST", "/v1/sandbox/chain/faucet", { body: { chain: rail, address, amount: decimal(amount) }, headers: apiKey(w.key) }),
    200,
    "faucet",
  );
  credit(m, rail, address, amount);
  m.minted[rail] += amount;
  include(m, rail, res.txHash, null, true);
}

/** A signed EVM transaction from the borrower: through the sandbox helper (polled at once) or straight onto the ledger (pending). */
export async function sendEvm(
  m: MoneyModel,
  w: World,
  from: string,
  tx: { to: string; data: string },
  direct: boolean,
): Promise<{ txHash: string; status: string }> {
  const account = w.accounts.get(from)!;
  const signedTransaction = await signAsBorrower(account, CHAIN_CONFIG.POLYGON_AMOY.chainId!, nextNonce(m, from), tx);
  if (direct) {
    // Straight onto the ledger, stamped with the tenant's time now, as the helpers stamp theirs: a helper's write
    // whose own poll was lost (registered first, as a helper registers its ledger).
    await markLedgerWritten({ db: w.t.db }, { sandboxTenantId: w.tenantId, chain: "POLYGON_AMOY", now: w.t.clock.now() });
    const res = await w.t.simChains
      .chain("POLYGON_AMOY", w.tenantId)
      .submitEvmTransaction({ serializedTransaction: signedTransaction, sandboxTenantId: w.tenantId, requireFundedSender: true, at: new Date(tenantNow(m)) });
    return { txHash: res.txHash, status: res.status };
  }
  return ok(
    w.t.request("POST", "/v1/sandbox/chain/transactions", { body: { chain: "POLYGON_AMOY", signedTransaction }, headers: apiKey(w.key) }),
    200,
    "transaction",
  );
}

export async function sendTon(
  m: MoneyModel,
  w: World,
  body: { from: string; to: string; amount: bigint; comment: string | null; token?: string },
  direct: boolean,
): Promise<{ txHash: string; status: string }> {
  if (direct) {
    await markLedgerWritten({ db: w.t.db }, { sandboxTenantId: w.tenantId, chain: "TON_TESTNET", now: w.t.clock.now() });
    const res = await w.t.simChains
      .chain("TON_TESTNET", w.tenantId)
      .transferToken({ ...body, sandboxTenantId: w.tenantId, requireFundedSender: true, at: new Date(tenantNow(m)) });
    return { txHash: res.txHash, status: res.status };
  }
  return ok(
    w.t.request("POST", "/v1/sandbox/chain/transfers", {
      body: { chain: "TON_TESTNET", ...body, amount: decimal(body.amount) },
      headers: apiKey(w.key),
    }),
    200,
    "transfer",
  );
}

export const approveCall = (amount: bigint) => ({
  to: EVM_TOKEN,
  data: encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [EVM_POOL, amount] }),
});
export const repayCall = (loanId: string, collections: string, amount: bigint) => ({
  to: EVM_POOL,
  data: encodeFunctionData({ abi: SVC_POOL_ABI, functionName: "repay", args: [loanIdToBytes32(loanId), getAddress(collections), amount] }),
});
export const transferCall = (to: string, amount: bigint) => ({
  to: EVM_TOKEN,
  data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [getAddress(to), amount] }),
});

/** The borrower approves the pool for `amount` (on the model: the allowance is set). */
export async function approve(m: MoneyModel, w: World, from: string, amount: bigint, direct: boolean) {
  const res = await sendEvm(m, w, from, approveCall(amount), direct);
  expect(res.status).toBe("success");
  m.allowances.set(from, amount);
  include(m, "POLYGON_AMOY", res.txHash, null, !direct);
}

/**
 * The pool's `repay(loanId, collections, amount)` from the borrower: it
 * reverts without allowance or balance (ERC-20 rules); a revert naming a
 * receiving address is a failed repayment; paying elsewhere counts for nothing.
 */
export async function repay(m: MoneyModel, w: World, from: string, loanId: string, collections: string, amount: bigint, direct: boolean) {
  const covered = (m.allowances.get(from) ?? 0n) >= amount && balanceOf(m, "POLYGON_AMOY", from) >= amount;
  const res = await sendEvm(m, w, from, repayCall(loanId, collections, amount), direct);
  expect({ repay: res.status }).toEqual({ repay: covered ? "success" : "reverted" });
  if (covered) {
    move(m, "POLYGON_AMOY", from, collections, amount);
    m.allowances.set(from, m.allowances.get(from)! - amount);
  }
  const toPool = getAddress(collections) === EVM_POOL;
  const observation: PendingObservation | null = !toPool ? null : covered ? { kind: "payment", loanId, amount, from } : { kind: "failed", loanId, amount };
  include(m, "POLYGON_AMOY", res.txHash, observation, !direct);
}

// --- the invariants, after every step ------------------------------------------------

const ms = (iso: string | null) => (iso === null ? null : Date.parse(iso));

/** The fields of a loan the model predicts, from the API's view. */
const viewOf = (l: any) => ({
  status: l.status,
  principalAmount: units(l.principalAmount),
  processingFee: units(l.processingFee),
  dailyLateFee: units(l.dailyLateFee),
  lateFeeDays: l.lateFeeDays,
  lateFee: units(l.lateFee),
  totalDue: units(l.totalDue),
  amountPaid: units(l.amountPaid),
  amountDue: units(l.amountDue),
  surplus: units(l.surplus),
  overdue: l.overdue,
  tenureDays: l.tenureDays,
  gracePeriodDays: l.gracePeriodDays,
  fundedAt: ms(l.fundedAt),
  dueAt: ms(l.dueAt),
  repaidAt: ms(l.repaidAt),
  defaultedAt: ms(l.defaultedAt),
});

/** Everything the invariants look at, read at once (all reads): the API's views, the pools, the ledgers. */
async function snapshot(m: MoneyModel, w: World) {
  const headers = apiKey(w.key);
  const get = (path: string) => ok(w.t.request("GET", path, { headers }), 200, `GET ${path}`);
  const pool = async (stablecoin: "USDC" | "USDT") =>
    (
      await w.t.db
        .select({ available: liquidityPools.available, reserved: liquidityPools.reserved })
        .from(liquidityPools)
        .where(and(eq(liquidityPools.tenantId, w.tenantId), eq(liquidityPools.stablecoin, stablecoin)))
    )[0]!;
  const ledger = async (rail: Rail) => {
    const sim = w.t.simChains.chain(rail, w.tenantId);
    const entries = [...m.balances[rail].keys()].map((k) => k.split("|") as [string, string]);
    const balances = await Promise.all(entries.map(([token, address]) => sim.balanceOf(address, token === m.tokens[rail] ? undefined : token)));
    return entries.map(([token, address], i) => ({ token, address, balance: balances[i]! }));
  };
  const [clock, list, events, kept, histories, usdc, usdt, evm, ton] = await Promise.all([
    get("/v1/sandbox/clock"),
    get("/v1/loans?limit=100"),
    get("/v1/events?limit=100"),
    get("/v1/settlements/unmatched?limit=100"),
    Promise.all(m.loans.map((l) => get(`/v1/settlements/${l.id}?limit=100`))),
    pool("USDC"),
    pool("USDT"),
    ledger("POLYGON_AMOY"),
    ledger("TON_TESTNET"),
  ]);
  return { clock, list, events, kept, histories, pools: { USDC: usdc, USDT: usdt }, ledgers: { POLYGON_AMOY: evm, TON_TESTNET: ton } };
}

/** The invariants, after every step: the service, the pools and the ledgers as the model says, to the unit. */
export async function checkInvariants(m: MoneyModel, w: World) {
  const at = tenantNow(m);
  const { clock, list, events, kept, histories, pools, ledgers } = await snapshot(m, w);
  expect({ clock: Date.parse(clock.now) }).toEqual({ clock: at });

  // Loans, field by field.
  expect(list.nextCursor).toBeNull();
  const shown = new Map<string, any>(list.data.map((l: any) => [l.id, l]));
  expect([...shown.keys()].sort()).toEqual(m.loans.map((l) => l.id).sort());
  for (const [i, loan] of m.loans.entries()) {
    expect({ loan: i, ...viewOf(shown.get(loan.id)) }).toEqual({ loan: i, ...expectedView(loan, at) });
  }

  // Events: every one belongs to a loan, in the model's order; those that name a status carry it.
  expect(events.nextCursor).toBeNull();
  const byLoan = new Map<string, string[]>();
  for (const e of [...events.data].reverse()) {
    const loanId = e.data?.loan?.id as string | undefined;
    expect({ event: e.type, loanId: loanId ?? null }).toEqual({ event: e.type, loanId: expect.any(String) });
    byLoan.set(loanId!, [...(byLoan.get(loanId!) ?? []), e.type]);
    const announced = { "loan.repaid": "REPAID", "loan.defaulted": "DEFAULTED", "loan.funded": "ACTIVE" }[e.type as string];
    if (announced) expect({ event: e.type, status: e.data.loan.status }).toEqual({ event: e.type, status: announced });
  }
  for (const [i, loan] of m.loans.entries()) expect({ loan: i, events: byLoan.get(loan.id) ?? [] }).toEqual({ loan: i, events: loan.events });

  // Settlement history of each loan.
  for (const [i, loan] of m.loans.entries()) {
    expect(histories[i].nextCursor).toBeNull();
    // Newest first, as every list: the model's order is the other way.
    const rows = [...histories[i].data]
      .reverse()
      .map((s: any) => ({ kind: s.kind, status: s.status, amount: units(s.amount), txHash: s.txHash, paidAt: ms(s.paidAt) }));
    expect({ loan: i, settlements: rows }).toEqual({ loan: i, settlements: loan.settlements });
  }

  // Unmatched payments kept for the tenant.
  expect(kept.nextCursor).toBeNull();
  const keptRows = kept.data
    .map((u: any) => ({
      txHash: u.txHash,
      chain: u.chain,
      amount: units(u.amount),
      claimedLoanId: u.claimedLoanId,
      attributedLoanId: u.attributedLoanId,
      paidAt: ms(u.paidAt),
    }))
    .sort((a: any, b: any) => a.txHash.localeCompare(b.txHash));
  const modelKept = m.unmatched
    .map((u) => ({
      txHash: u.txHash,
      chain: u.chain,
      amount: u.amount,
      claimedLoanId: u.claimedLoanId,
      attributedLoanId: u.attributedLoanId,
      paidAt: u.paidAt,
    }))
    .sort((a, b) => a.txHash.localeCompare(b.txHash));
  expect({ unmatched: keptRows }).toEqual({ unmatched: modelKept });

  for (const rail of RAILS) {
    // Every balance on the ledger, and conservation: the sum moves only by the faucet's mints.
    let total = 0n;
    for (const { token, address, balance } of ledgers[rail]) {
      expect({ rail, address, token, balance }).toEqual({ rail, address, token, balance: balanceOf(m, rail, address, token) });
      if (token === m.tokens[rail]) total += balance;
    }
    expect({ rail, total }).toEqual({ rail, total: m.initialReceiver[rail] + m.minted[rail] });

    // What reached the receiver is what the service credited to loans, kept as surplus, kept unmatched, or has not seen yet.
    const receiver = ledgers[rail].find((b) => b.token === m.tokens[rail] && b.address === m.receivers[rail])!;
    const received = receiver.balance - m.initialReceiver[rail];
    const onRail = list.data.filter((l: any) => l.chain === rail);
    const funded = onRail.reduce((s: bigint, l: any) => s + units(l.principalAmount), 0n);
    const accounted =
      onRail.reduce((s: bigint, l: any) => s + units(l.amountPaid) + units(l.surplus), 0n) +
      kept.data.filter((u: any) => u.chain === rail && u.attributedLoanId === null).reduce((s: bigint, u: any) => s + units(u.amount), 0n);
    const inFlight = m.pending[rail].reduce((s, p) => s + (p.observation?.kind === "payment" ? p.observation.amount : 0n), 0n);
    expect({ rail, receivedSinceGenesis: received + funded }).toEqual({ rail, receivedSinceGenesis: accounted + inFlight });
  }

  // The liquidity pools: initial − principal funded + what the loans repaid; nothing stays reserved.
  for (const stablecoin of ["USDC", "USDT"] as const) {
    const pool = pools[stablecoin];
    expect({ stablecoin, ...pool }).toEqual({ stablecoin, available: m.pools[stablecoin], reserved: 0n });
    // The service's own books agree: the pool moved by exactly what its loans were credited.
    const credited = list.data
      .filter((l: any) => l.stablecoin === stablecoin)
      .reduce((s: bigint, l: any) => s + units(l.amountPaid) - units(l.principalAmount), 0n);
    expect({ stablecoin, moved: pool.available - m.initialPools[stablecoin] }).toEqual({ stablecoin, moved: credited });
  }
}

// --- a fresh world per run ------------------------------------------------------------

/** A fresh app, database, clock and simulated ledgers; a sandbox tenant lending on both rails; and the model of it. */

export async function setUp(): Promise<{ model: MoneyModel; world: World }> {
  const t = await createTestApp();
  // Whole seconds: block times are in seconds, so every moment of the run is exact. (Back, not
  // forward: session tokens are checked against real time and must not be issued in its future.)
  t.clock.set(new Date(Math.floor(t.clock.now().getTime() / 1000) * 1000));
  const owner = await sandboxTenant(t, "Money Model");
  const configs = (await ok(t.request("GET", "/v1/merchant-configs", { headers: bearer(owner.token) }))).data;
  const ton = await ok(
    t.request("POST", "/v1/merchant-configs", {
      body: {
        network: "TON",
        stablecoin: "USDT",
        tenures: [3, 7, 15],
        minTicket: "10.00",
        maxTicket: "1000.00",
        gracePeriodDays: 3,
        processingFee: { type: "PERCENTAGE", value: "2.00" },
        lateFee: { type: "FIXED", value: "1.00" },
      },
      headers: bearer(owner.token),
    }),
    201,
    "TON config",
  );
  await ok(t.request("PUT", "/v1/sandbox/liquidity", { body: { available: "100000.00", stablecoin: "USDT" }, headers: apiKey(owner.key) }));
  const world: World = {
    t,
    key: owner.key,
    token: owner.token,
    tenantId: owner.tenantId,
    configId: { POLYGON_AMOY: configs[0].id, TON_TESTNET: ton.id },
    productId: { POLYGON_AMOY: owner.loanProductId, TON_TESTNET: ton.loanProductId },
    accounts: new Map(),
    elsewhere: { POLYGON_AMOY: privateKeyToAccount(generatePrivateKey()).address, TON_TESTNET: `0:${"cd".repeat(32)}` },
  };
  const pools = { USDC: 0n, USDT: 0n };
  for (const stablecoin of ["USDC", "USDT"] as const) {
    const [pool] = await t.db
      .select({ available: liquidityPools.available })
      .from(liquidityPools)
      .where(and(eq(liquidityPools.tenantId, owner.tenantId), eq(liquidityPools.stablecoin, stablecoin)));
    pools[stablecoin] = pool!.available;
  }
  const initialReceiver = { POLYGON_AMOY: 0n, TON_TESTNET: 0n };
  const balances = { POLYGON_AMOY: new Map<string, bigint>(), TON_TESTNET: new Map<string, bigint>() };
  for (const rail of RAILS) {
    initialReceiver[rail] = await t.simChains.chain(rail, owner.tenantId).balanceOf(RECEIVER[rail]);
    balances[rail].set(`${TOKEN[rail]}|${RECEIVER[rail]}`, initialReceiver[rail]);
    balances[rail].set(`${TOKEN[rail]}|${world.elsewhere[rail]}`, 0n);
  }
  balances.TON_TESTNET.set(`${OTHER_JETTON}|${TON_WALLET}`, 0n);
  const terms: Terms = { gracePeriodDays: 3, processingFee: { type: "PERCENTAGE", value: "2.00" }, lateFee: { type: "FIXED", value: "1.00" } };
  const model: MoneyModel = {
    sysMs: t.clock.now().getTime(),
    offsetMs: 0,
    terms: { POLYGON_AMOY: terms, TON_TESTNET: terms },
    tokens: TOKEN,
    receivers: RECEIVER,
    loans: [],
    balances,
    minted: { POLYGON_AMOY: 0n, TON_TESTNET: 0n },
    initialReceiver,
    nonces: new Map(),
    allowances: new Map(),
    pools: { ...pools },
    initialPools: pools,
    unmatched: [],
    pending: { POLYGON_AMOY: [], TON_TESTNET: [] },
  };
  return { model, world };
}
