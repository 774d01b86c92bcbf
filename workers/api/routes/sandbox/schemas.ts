import { z } from "@hono/zod-openapi";
import { formatAmount, parseAmount, UNITS_PER_COIN } from "../../../../shared/domain/money.ts";
import { STABLECOINS } from "../../../../shared/domain/rails.ts";
import { MAX_ADVANCE_SECONDS } from "../../../../shared/sandbox/sandbox-clock.ts";
import { TimestampSchema } from "../../../../shared/schemas/common.ts";
import { AmountSchema } from "../../../../shared/schemas/money.ts";

export const SandboxClockSchema = z
  .object({
    now: TimestampSchema.openapi({ description: "The tenant's sandbox clock: the system time plus the offset." }),
    offsetSeconds: z.number().openapi({ description: "How far the tenant's clock runs ahead of real time.", example: 691_200 }),
  })
  .openapi("SandboxClock");

export const AdvanceClockBodySchema = z
  .object({
    seconds: z
      .number()
      .int()
      .min(1)
      .max(MAX_ADVANCE_SECONDS)
      .openapi({ description: `Whole seconds to move forward, 1 to ${MAX_ADVANCE_SECONDS} (400 days).`, example: 8 * 86_400 }),
  })
  .openapi("AdvanceSandboxClockRequest");

export const AdvancedClockSchema = SandboxClockSchema.extend({
  swept: z
    .object({
      visited: z.number().int().openapi({ description: "Loans the overdue/default sweep handled." }),
      failed: z.number().int().openapi({ description: "Loans whose sweep failed; the next advance or cron tick retries them." }),
      unreadLedgers: z.array(z.string()).optional().openapi({
        description:
          "Present when some of your sandbox ledgers could not be read before the sweep (their chains): a payment on them is credited by the next poll, at its own time.",
      }),
    })
    .openapi({ description: "The sweep that ran for the tenant before this response." }),
}).openapi("AdvancedSandboxClock");

/** Far above any sandbox need; keeps pool amounts inside the database's exact integer range. */
const MAX_POOL_UNITS = 1_000_000_000n * UNITS_PER_COIN;
const AMOUNT_PATTERN = /^\d+(\.\d{1,2})?$/;

/** AmountSchema bounded to MAX_POOL_UNITS; a string the pattern refused is reported once, by the pattern. */
const PoolAmountSchema = AmountSchema.refine(
  (s) => {
    const units = parseAmount(s, 2);
    return units === null ? !AMOUNT_PATTERN.test(s) : units <= MAX_POOL_UNITS;
  },
  `must be at most ${formatAmount(MAX_POOL_UNITS)}`,
);

export const SetLiquidityBodySchema = z
  .object({
    available: PoolAmountSchema.openapi({ description: "The pool's balance, reservations included; at least what is reserved.", example: "100000.00" }),
    stablecoin: z.enum(STABLECOINS).default("USDC").openapi({ description: "Which of the tenant's pools; default USDC.", example: "USDC" }),
    lowThreshold: PoolAmountSchema.optional().openapi({
      description: "`liquidity.low` fires once when headroom falls under this; omitted: unchanged (1000.00 for a new pool).",
      example: "1000.00",
    }),
  })
  .openapi("SetSandboxLiquidityRequest");

export const PoolSchema = z
  .object({
    id: z.uuid(),
    stablecoin: z.enum(STABLECOINS),
    available: z.string().openapi({ example: "100000.00" }),
    reserved: z.string().openapi({ description: "Principal reserved for loans being funded.", example: "0.00" }),
    headroom: z.string().openapi({ description: "available − reserved: what new loans can draw.", example: "100000.00" }),
    lowThreshold: z.string().openapi({ example: "1000.00" }),
  })
  .openapi("LiquidityPool");

export const SetLiquidityResultSchema = z
  .object({
    pool: PoolSchema,
    funded: z.number().int().openapi({ description: "Approved loans waiting for funding whose funding was retried before this response." }),
    stillWaiting: z.number().int().openapi({ description: "The tenant's approved loans still waiting for liquidity after the retry." }),
  })
  .openapi("SandboxLiquidity");
