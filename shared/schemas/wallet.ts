import { z } from "@hono/zod-openapi";
import { LIVE_WALLET_CHAINS, WALLET_ROLES } from "../domain/wallets.ts";
import { TimestampSchema } from "./common.ts";

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
      .openapi({ description: `The chain's stablecoin held, decimal string with 2 to 6 decimals, as every amount. ${NOT_READ}`, example: "2500.50" }),
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

export { walletView } from "../wallets/wallet-view.ts";
