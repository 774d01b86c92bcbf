import { getAddress, keccak256, maxUint256, toHex, type Address } from "viem";
import { canonicalAddress } from "../../domain/addresses.ts";
import type { Clock } from "../../domain/clock.ts";
import type { Chain } from "../../domain/rails.ts";
import { CHAIN_CONFIG, type ChainConfig } from "../chain-config.ts";
import type { SimTxKind } from "./sim-chain-ops.ts";
import { SimChainRejected } from "./sim-chain-rejected.ts";

/**
 * What every rule of one simulated ledger needs to know: its chain's
 * configuration and stablecoin, the ledger's name and the clock. The input
 * checks live here too, so every operation reads addresses and amounts the
 * same way and rejects before writing anything.
 */
export class SimChainContext {
  readonly config: ChainConfig;
  readonly stablecoin: string;

  /** `ledger`: `<tenantId>:<chain>` for a sandbox tenant's ledger, or the chain's name. */
  constructor(
    readonly chain: Chain,
    readonly ledger: string,
    readonly clock: Clock,
  ) {
    const config = CHAIN_CONFIG[chain];
    if (!config.simulated) throw new RangeError(`${chain} is not a simulated chain`);
    this.config = config;
    this.stablecoin = config.family === "EVM" ? getAddress(config.token.address) : config.token.address;
  }

  /**
   * This context with its clock standing at `time` (a write's LedgerTime), or
   * itself when no time is named. A time that is no valid Date is refused.
   */
  at(time: Date | undefined): SimChainContext {
    if (time === undefined) return this;
    if (!(time instanceof Date) || !Number.isFinite(time.getTime())) throw new SimChainRejected("at must be a valid Date");
    const stamped = new Date(time.getTime());
    return new SimChainContext(this.chain, this.ledger, { now: () => stamped });
  }

  /** The canonical form of an address on this chain (EIP-55 on EVM, raw on TON, base58 on Solana). */
  address(input: string, field: string): string {
    if (typeof input !== "string") throw new SimChainRejected(`${field} must be an address string`);
    const result = canonicalAddress(this.chain, input);
    if (!result.ok) throw new SimChainRejected(`${field} ${result.reason}`);
    return result.address;
  }

  /** The token an input names, or the chain's stablecoin when it names none. */
  token(input: string | undefined): string {
    return input === undefined ? this.stablecoin : this.address(input, "token");
  }

  requireFamily(family: ChainConfig["family"], operation: string): void {
    if (this.config.family !== family) throw new SimChainRejected(`${operation} is for ${family} chains; ${this.chain} is ${this.config.family}`);
  }

  /** The family a TON or Solana transaction is recorded with. */
  transferFamily(): "TON" | "SOLANA" {
    return this.config.family === "TON" ? "TON" : "SOLANA";
  }

  /** EVM: the SvcPool contract. */
  pool(): Address {
    return getAddress(this.config.pool!);
  }

  /** Where principal comes from: the pool (EVM) or the funding wallet (TON, Solana). */
  fundingSource(): string {
    return this.config.family === "EVM" ? this.pool() : this.config.fundingSource!;
  }

  isPlatformWallet(address: string): boolean {
    return address === this.fundingSource() || address === this.config.settlementWallet;
  }

  /** Transactions nobody signed (faucet, transfers, funding) get a unique hash from their block and ledger. */
  syntheticHash(kind: SimTxKind, block: number, ...parts: unknown[]): string {
    return keccak256(toHex([this.ledger, kind, block, ...parts.map(String)].join("|")));
  }
}

export function positiveAmount(amount: unknown): bigint {
  if (typeof amount !== "bigint" || amount <= 0n) throw new SimChainRejected("amount must be a positive integer number of units");
  if (amount > maxUint256) throw new SimChainRejected("amount exceeds uint256");
  return amount;
}
