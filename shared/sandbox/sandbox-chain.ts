import type { SimulatedChains } from "../chains/simulated/sim-chains.ts";
import { SimChainRejected } from "../chains/simulated/sim-chain-rejected.ts";
import { chainConfig } from "../chains/chain-config.ts";
import { canonicalAddress } from "../domain/addresses.ts";
import { forbidden, validationError } from "../domain/errors.ts";
import { amountError, formatAmount, parseAmount } from "../domain/money.ts";
import { isSandboxChain, type Chain } from "../domain/rails.ts";
import { markLedgerWritten, pollChain, type ListenerDeps } from "../settlement/listener.ts";
import { tenantClock } from "../tenants/tenant-context.ts";

/** One faucet call gives at most this much test stablecoin. */
export const FAUCET_MAX_UNITS = 1_000_000n * 1_000_000n;

/** The calling tenant, with its sandbox clock's offset (as the request's principal read it). */
type Tenant = { id: string; mode: "sandbox" | "live"; clockOffsetMs: number };
type Deps = ListenerDeps & { simChains: SimulatedChains };

/**
 * The helpers work on sandbox chains only. They do not ask the tenant's mode:
 * a certified tenant keeps its sandbox (DECISIONS.md "Modes"), and the routes
 * admit sandbox keys only (`requireMode`), so a live key never gets here.
 */
function sandboxChain(chain: Chain) {
  if (!isSandboxChain(chain)) throw forbidden(`${chain} is a live chain; the sandbox helpers work on sandbox chains only`);
}

/**
 * The tenant's own ledger of a sandbox chain (DECISIONS.md "Modes"), marked
 * as written first so that the cron job polls it should the helper's own
 * poll never run; and `at`, the tenant's sandbox time of the call, which the
 * write is stamped with (LedgerTime): a repayment is judged at it, whenever
 * the listener reads it.
 */
async function ledgerFor(deps: Deps, tenant: Tenant, chain: Chain) {
  const { clockOffsetMs } = await markLedgerWritten(deps, { sandboxTenantId: tenant.id, chain, now: deps.clock.now() });
  // The clock as it is now, not as the request's principal read it: a clock advance racing this write has swept on
  // its new time, and a payment stamped before it would be judged on time after its loan was defaulted.
  return {
    ledger: deps.simChains.chain(chain, tenant.id),
    at: tenantClock(deps.clock, { ...tenant, clockOffsetMs: Math.max(clockOffsetMs, tenant.clockOffsetMs) }, "sandbox").now(),
  };
}

/** The platform's wallets on `chain` (pool, settlement wallet): only the service's funding moves them. */
function isPlatformWallet(chain: Chain, address: string): boolean {
  const config = chainConfig(chain);
  return [config.pool, config.settlementWallet, config.fundingSource].some((platform) => {
    if (!platform) return false;
    const parsed = canonicalAddress(chain, platform);
    return parsed.ok && parsed.address === address;
  });
}

/** The chain's stablecoin contract (a jetton master on TON, a mint on Solana). */
function isTokenContract(chain: Chain, address: string): boolean {
  const parsed = canonicalAddress(chain, chainConfig(chain).token.address);
  return parsed.ok && parsed.address === address;
}

function address(chain: Chain, field: string, value: string): string {
  const parsed = canonicalAddress(chain, value);
  if (!parsed.ok) throw validationError([`${field}: ${parsed.reason}`]);
  return parsed.address;
}

function amountOf(value: string): bigint {
  const units = parseAmount(value, 6);
  if (units === null || units <= 0n) throw validationError([amountError("amount", 6)]);
  return units;
}

/** A simulated chain's refusal is the caller's bad input: 400 naming the field (or the field its reason names). */
async function orRejected<T>(field: string | ((reason: string) => string), op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    if (err instanceof SimChainRejected || (err instanceof Error && err.name === "SimChainRejected")) {
      throw validationError([`${typeof field === "string" ? field : field(err.message)}: ${err.message}`]);
    }
    throw err;
  }
}

/** Test stablecoin for a wallet on a sandbox chain. */
export async function faucet(deps: Deps, { tenant, ...input }: { tenant: Tenant; chain: Chain; address: string; amount: string }) {
  sandboxChain(input.chain);
  const amount = amountOf(input.amount);
  if (amount > FAUCET_MAX_UNITS) throw validationError(["amount: at most 1000000 per call"]);
  const to = address(input.chain, "address", input.address);
  // Minted into the pool or the settlement wallet, it read as money received there, attributable to a loan no wallet paid (review).
  if (isPlatformWallet(input.chain, to) || isTokenContract(input.chain, to)) {
    throw forbidden(`address is the platform's own on ${input.chain}; the faucet gives test stablecoin to wallets of your own sandbox`);
  }
  const { ledger, at } = await ledgerFor(deps, tenant, input.chain);
  const result = await orRejected("address", () => ledger.faucet({ address: to, amount, sandboxTenantId: tenant.id, at }));
  await pollChain(deps, { chain: input.chain, sandboxTenantId: tenant.id });
  return { txHash: result.txHash, status: "success" as const, blockNumber: result.blockNumber };
}

/**
 * A wallet as the tenant's own ledger of a sandbox chain has it: its
 * stablecoin balance (6 decimals) and, on EVM, the nonce its next signed
 * transaction must carry (null elsewhere). A read: nothing is written, and a
 * wallet the ledger never saw reads 0 and nonce 0.
 */
export async function account(deps: Deps, { tenant, ...input }: { tenant: Tenant; chain: Chain; address: string }) {
  sandboxChain(input.chain);
  const at = address(input.chain, "address", input.address);
  const ledger = deps.simChains.chain(input.chain, tenant.id);
  const evm = chainConfig(input.chain).family === "EVM";
  const [balance, nonce] = await Promise.all([ledger.balanceOf(at), evm ? ledger.nonceOf(at) : Promise.resolve(null)]);
  return { chain: input.chain, address: at, balance: formatAmount(balance, 6), nonce };
}

/**
 * A plain token transfer (TON jetton with its comment, Solana SPL with its
 * memo), on the tenant's own ledger of the chain: it moves only wallets of
 * the tenant's sandbox. The platform's wallets: 403. A wallet that never held
 * the token on this ledger (another tenant's borrower, say): 400. It returns
 * after the settlement listener has processed it, so a GET right after shows
 * the result. A sender who cannot cover it: status failed.
 */
export async function transfer(
  deps: Deps,
  { tenant, ...input }: { tenant: Tenant; chain: Chain; from: string; to: string; amount: string; comment?: string | null; token?: string },
) {
  sandboxChain(input.chain);
  if (chainConfig(input.chain).family === "EVM") {
    throw validationError(["chain: EVM chains take signed transactions: POST /v1/sandbox/chain/transactions"]);
  }
  const from = address(input.chain, "from", input.from);
  if (isPlatformWallet(input.chain, from)) {
    throw forbidden(`from is the platform's settlement wallet on ${input.chain}; the sandbox moves only wallets of your own sandbox`);
  }
  const request = { from, to: address(input.chain, "to", input.to), amount: amountOf(input.amount), comment: input.comment ?? null, token: input.token };
  const { ledger, at } = await ledgerFor(deps, tenant, input.chain);
  const result = await orRejected(
    (reason) => (reason.startsWith("token ") ? "token" : "from"),
    () => ledger.transferToken({ ...request, sandboxTenantId: tenant.id, requireFundedSender: true, at }),
  );
  await pollChain(deps, { chain: input.chain, sandboxTenantId: tenant.id });
  return { txHash: result.txHash, status: result.status, blockNumber: result.blockNumber, failureReason: result.failureReason };
}

/**
 * An EVM transaction signed by the borrower's key (approve, transfer, the
 * pool's repay), on the tenant's own ledger of the chain. Executed with ERC-20
 * rules; returns after the listener has processed it. Unparsable, unsigned,
 * another chain id, a wrong nonce, or a sender that never held the stablecoin
 * on this ledger (as a node refuses an account without gas): 400.
 */
export async function submitTransaction(deps: Deps, { tenant, ...input }: { tenant: Tenant; chain: Chain; signedTransaction: string }) {
  sandboxChain(input.chain);
  if (chainConfig(input.chain).family !== "EVM") {
    throw validationError(["chain: signed transactions are for EVM chains; TON and Solana take POST /v1/sandbox/chain/transfers"]);
  }
  const { ledger, at } = await ledgerFor(deps, tenant, input.chain);
  const result = await orRejected("signedTransaction", () =>
    ledger.submitEvmTransaction({ serializedTransaction: input.signedTransaction, sandboxTenantId: tenant.id, requireFundedSender: true, at }),
  );
  await pollChain(deps, { chain: input.chain, sandboxTenantId: tenant.id });
  return { txHash: result.txHash, status: result.status, blockNumber: result.blockNumber, from: result.from, revertReason: result.revertReason };
}
