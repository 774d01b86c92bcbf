/** The shapes the Configuration page reads from `/v1` (as the OpenAPI document gives them). */
export type Fee = { type: "FIXED" | "PERCENTAGE"; value: string };

export type MerchantConfig = {
  id: string;
  network: string;
  stablecoin: string;
  chain: string;
  tenures: number[];
  minTicket: string;
  maxTicket: string;
  gracePeriodDays: number;
  processingFee: Fee;
  lateFee: Fee;
  loanProductId: string;
  updatedAt: string;
};

export type Policy = {
  version: number;
  requireKycVerified: boolean;
  manualReviewAbove: string | null;
  maxOpenLoansPerBorrower: number | null;
  blockedWallets: string[];
  createdAt: string | null;
  rules: { code: string; order: number; effect: "DECLINE" | "REVIEW"; description: string }[];
};

export type Branding = { companyName: string; logoUrl: string | null; primaryColor: string | null; supportEmail: string | null; termsUrl: string | null };
export type Settings = { requiresKycBeforeFunding: boolean; branding: Branding; updatedAt: string | null };

export type WidgetProgram = {
  id: string;
  name: string;
  embedKey: string;
  mode: "sandbox" | "live";
  merchantConfigId: string;
  network: string;
  stablecoin: string;
  allowedOrigins: string[];
  createdAt: string;
};

export type PageOf<T> = { data: T[]; nextCursor: string | null };
