import { z } from "@hono/zod-openapi";
import { TimestampSchema } from "../../../../shared/schemas/common.ts";
import { LIVE_WALLET_CHAINS, WALLET_ROLES } from "../../../../shared/domain/wallets.ts";
import { CHAINS } from "../../../../shared/domain/vocabularies.ts";

/**
 * The body of POST /v1/wallets. `chain` takes every chain name so that a
 * sandbox chain is answered with a sentence (wallets are for live chains
 * only) rather than a bare enum mismatch.
 */
export const CreateWalletBodySchema = z
  .object({
    chain: z
      .enum(CHAINS)
      .openapi({ description: `A live chain: ${LIVE_WALLET_CHAINS.join(", ")}. Sandbox chains are simulated and take no wallets (400).`, example: "POLYGON" }),
    role: z
      .enum(WALLET_ROLES)
      .openapi({ description: "TREASURY, DISBURSEMENT (sends principal), COLLECTIONS (receives repayments) or GAS (pays fees).", example: "DISBURSEMENT" }),
    address: z.string().max(100).openapi({
      description: "Validated and stored canonical for the chain (EIP-55 on EVM, raw `0:<hex>` on TON).",
      example: "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045",
    }),
  })
  .openapi("WalletRequest");

export const UpdateWalletBodySchema = z
  .object({
    gasThreshold: z
      .string()
      .max(60)
      .nullable()
      .openapi({ description: "GAS wallets only: native units (POL, ETH or TON), decimal string, greater than 0; null clears it.", example: "0.5" }),
  })
  .openapi("WalletUpdate");

export const WalletChallengeSchema = z
  .object({
    id: z.string().openapi({ description: "The `challengeId` to send to `POST /v1/wallets/{id}/verify`." }),
    message: z
      .string()
      .openapi({ description: "The exact text to sign with the wallet (EIP-191 `personal_sign` on EVM; TON Connect `signData` text on TON)." }),
    expiresAt: TimestampSchema,
  })
  .openapi("WalletChallenge");

export const VerifyWalletBodySchema = z
  .object({
    challengeId: z.string().max(100).openapi({ description: "From `POST /v1/wallets/{id}/challenge`; single use, valid 5 minutes." }),
    signature: z
      .string()
      .max(1000)
      .openapi({ description: "EVM: the 0x-hex EIP-191 signature of the message. TON: the base64 signature of the TON Connect `signData` reply." }),
    publicKey: z.string().max(200).optional().openapi({ description: "TON only: the wallet's public key (hex or base64) from the `signData` reply." }),
    timestamp: z.number().int().optional().openapi({ description: "TON only: the `signData` reply's timestamp (Unix seconds)." }),
    domain: z.string().max(300).optional().openapi({
      description: "TON only: the `signData` reply's domain: the widget host, or the host of one of the tenant's widget programs' allowed origins.",
    }),
  })
  .openapi("WalletVerification");
