/**
 * What the widget shows of a program (DECISIONS.md `GET …/config`). A plain
 * type with no imports: the browser app reads it too.
 */
export type WidgetConfig = {
  program: { id: string; name: string };
  branding: { companyName: string | null; logoUrl: string | null; primaryColor: string | null; supportEmail: string | null; termsUrl: string | null };
  poweredBy: string;
  network: string;
  stablecoin: string;
  chain: string;
  tenures: number[];
  minAmount: string;
  maxAmount: string;
  processingFee: { type: "FIXED" | "PERCENTAGE"; value: string };
  lateFee: { type: "FIXED" | "PERCENTAGE"; value: string };
  gracePeriodDays: number;
};
