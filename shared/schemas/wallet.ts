import { z } from "@hono/zod-openapi";
import type { WalletBalances } from "../chains/chain-port.ts";
import { chainConfig } from "../chains/chain-config.ts";
import { formatBaseUnits, LIVE_WALLET_CHAINS, nativeDecimals, WALLET_ROLES } from "../domain/wallets.ts";
import type { Chain } from "../domain/rails.ts";
import { iso, isoOrNull, TimestampSchema } from "./common.ts";

const NOT_READ = "null: not read (the chain is not configured in this deployment, or did not answer).";

/** A live wallet as the API shows it (DECISIONS.md "Live wallets"). */
export const WalletSchema = z
  .object({
    id: z.string().openapi({ example: "0b8e0f7a-3f5c-4d8e-9a0b-6e2c1d4f5a7b" }),
    chain: z.enum(LIVE_WALLET_CHAINS),
    role: z.enum(WALLET_ROLES),
    address: z
      .string()
      .openapi({ description: "Canonical for the chain: EIP-55 on EVM, raw `0:<hex>` on TON.", example: "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045" }),
    controlVerified: z.boolean().openapi({
      description:
        "Whether a signed challenge proved control of the address (`POST /v1/wallets/{id}/verify`). A wallet must be verified before it funds or collects.",
    }),
    verifiedAt: TimestampSchema.nullable(),
    stablecoinBalance: z
      .string()
      .nullable()
      .openapi({ description: `The chain's stablecoin held, decimal string. ${NOT_READ}`, example: "2500.5" }),
    nativeBalance: z
      .string()
      .nullable()
      .openapi({ description: `The native coin held (POL, ETH or TON), decimal string. ${NOT_READ}`, example: "0.75" }),
    gasThreshold: z.string().nullable().openapi({
      description: "GAS wallets: `wallet.gas_low` fires once when the native balance falls under this (native units, decimal string). Null: no alert.",
      example: "0.5",
    }),
    createdAt: TimestampSchema,
  })
  .openapi("Wallet");

export type WalletView = z.infer<typeof WalletSchema>;

/** The response body of a wallet with the balances read for it (null: not read). */
export function walletView(
  w: { id: string; chain: Chain; role: (typeof WALLET_ROLES)[number]; address: string; verifiedAt: Date | null; gasThreshold: string | null; createdAt: Date },
  balances: WalletBalances | null,
): WalletView {
  const native = nativeDecimals(w.chain);
  return {
    id: w.id,
    chain: w.chain as WalletView["chain"],
    role: w.role,
    address: w.address,
    controlVerified: w.verifiedAt !== null,
    verifiedAt: isoOrNull(w.verifiedAt),
    stablecoinBalance: balances ? formatBaseUnits(balances.stablecoin, chainConfig(w.chain).token.decimals) : null,
    nativeBalance: balances ? formatBaseUnits(balances.native, native) : null,
    gasThreshold: w.gasThreshold === null ? null : formatBaseUnits(BigInt(w.gasThreshold), native),
    createdAt: iso(w.createdAt),
  };
}
