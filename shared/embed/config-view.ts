import { formatAmount } from "../domain/money.ts";
import type { ProgramContext } from "./program-context.ts";
import type { WidgetConfig } from "./widget-config.ts";

const fee = (type: "FIXED" | "PERCENTAGE", value: bigint) => ({ type, value: formatAmount(value) });

/** The "Powered by" line every widget surface shows, whatever the branding. */
export const POWERED_BY = "Powered by svc credit";

/**
 * What the widget shows of a program (DECISIONS.md `GET …/config`): branding,
 * the "Powered by" line, the rail and the product's limits and fees.
 */
export function widgetConfigView({ program, product, settings, chain }: ProgramContext): WidgetConfig {
  return {
    program: { id: program.id, name: program.name },
    branding: settings.branding,
    poweredBy: POWERED_BY,
    network: product.network,
    stablecoin: product.stablecoin,
    chain,
    tenures: product.tenures,
    minAmount: formatAmount(product.minTicket),
    maxAmount: formatAmount(product.maxTicket),
    processingFee: fee(product.processingFeeType, product.processingFeeValue),
    lateFee: fee(product.lateFeeType, product.lateFeeValue),
    gracePeriodDays: product.gracePeriodDays,
  };
}
