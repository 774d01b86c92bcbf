/**
 * Request-body examples of the api document's main operations, shown by doc
 * renderers and generated clients. They sit on the media type, not on the
 * schemas: the OpenAPI fuzzers take a schema's example as a canonical value,
 * and these are for readers. Each is valid for its route's schema
 * (workers/api/openapi-lint.test.ts parses them, redocly checks them).
 */
const WALLET = "0x8ba1f109551bD432803012645Ac136ddd64DBA72";

export const SIGNUP_EXAMPLE = { email: "owner@merchant.example", password: "correct-horse-battery-staple", companyName: "Acme Store" };

export const LOGIN_EXAMPLE = { email: "owner@merchant.example", password: "correct-horse-battery-staple" };

export const API_KEY_EXAMPLE = { name: "Checkout backend", mode: "sandbox" };

export const LOAN_EXAMPLE = {
  loanProductId: "3f6c2a9e-8d41-4b7a-9c15-2e7d4f0b8a63",
  borrowerRef: "user-42",
  borrowerWalletAddress: WALLET,
  chain: "POLYGON_AMOY",
  principalAmount: "100.00",
  idempotencyKey: "order-1234",
  tenureDays: 7,
};

export const WEBHOOK_EXAMPLE = { url: "https://hooks.merchant.example/svc", events: ["loan.funded", "loan.repaid"] };

export const POLICY_EXAMPLE = {
  requireKycVerified: true,
  manualReviewAbove: "500.00",
  maxOpenLoansPerBorrower: 3,
  blockedWallets: ["0x000000000000000000000000000000000000dEaD"],
};

export const MERCHANT_CONFIG_EXAMPLE = {
  network: "POLYGON",
  stablecoin: "USDC",
  tenures: [3, 7, 15],
  minTicket: "10.00",
  maxTicket: "1000.00",
  gracePeriodDays: 3,
  processingFee: { type: "PERCENTAGE", value: "2.00" },
  lateFee: { type: "FIXED", value: "1.00" },
};

export const SETTINGS_EXAMPLE = {
  requiresKycBeforeFunding: false,
  branding: {
    companyName: "Acme Store",
    logoUrl: "https://merchant.example/logo.png",
    primaryColor: "#1A2B3C",
    supportEmail: "support@merchant.example",
    termsUrl: "https://merchant.example/terms",
  },
};

export const WIDGET_PROGRAM_EXAMPLE = {
  name: "Checkout widget",
  merchantConfigId: "7c1e4b2a-5d3f-4e8a-b6c9-0a1d2e3f4b5c",
  allowedOrigins: ["https://shop.merchant.example", "http://localhost:3000"],
};
