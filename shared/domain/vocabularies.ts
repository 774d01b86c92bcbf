/**
 * The status and enum vocabularies of the domain, which the schema stores.
 * They live in the pure domain (plain `as const` arrays, no imports) and db/
 * imports them from here, so the domain never depends on the database.
 */
export const NETWORKS = ["TON", "POLYGON", "BASE"] as const;
export const STABLECOINS = ["USDT", "USDC"] as const;
export const CHAINS = ["POLYGON_AMOY", "BASE_SEPOLIA", "SOLANA_DEVNET", "TON_TESTNET", "POLYGON", "BASE", "TON"] as const;
export const TENANT_MODES = ["sandbox", "live"] as const;
export const FEE_TYPES = ["FIXED", "PERCENTAGE"] as const;
export const ROLES = ["OWNER", "ADMIN", "MEMBER"] as const;
export const LOAN_PRODUCT_STATUSES = ["ACTIVE", "INACTIVE"] as const;

export type Role = (typeof ROLES)[number];

export const KYC_STATUSES = ["PENDING", "VERIFIED", "FAILED"] as const;
export const DECISION_OUTCOMES = ["APPROVED", "DECLINED", "MANUAL_REVIEW"] as const;
export const LOAN_STATUSES = ["CREATED", "ACTIVE", "REPAID", "DEFAULTED"] as const;
/** Every event type of SPEC.md "Events", in the order of its table. */
export const EVENT_TYPES = [
  "loan.application_submitted",
  "loan.decision",
  "loan.approved",
  "loan.rejected",
  "loan.funded",
  "loan.funding_failed",
  "loan.repaid",
  "loan.repayment_failed",
  /** Not in SPEC.md: a live chain reorganized away the block of a credited repayment (README "Live EVM settlement"). */
  "loan.repayment_reversed",
  "loan.overdue",
  "loan.defaulted",
  "liquidity.low",
  "liquidity.unavailable",
  "webhook.delivery_failed",
  "wallet.gas_low",
  /** Not in SPEC.md: sent by hand to one endpoint (`POST /v1/webhooks/:id/test`), never fanned out, no notification (README "Webhooks"). */
  "webhook.test",
] as const;

/** The roles of a tenant's live wallet (DECISIONS.md "Live wallets"). */
export const WALLET_ROLES = ["TREASURY", "DISBURSEMENT", "COLLECTIONS", "GAS"] as const;

/** Webhook deliveries (DECISIONS.md "Webhooks, notifications"). */
export const DELIVERY_STATUSES = ["PENDING", "SUCCEEDED", "FAILED"] as const;
/** A notification's e-mail to the account owner. SKIPPED: the owner's address is not verified (or there is none). */
export const EMAIL_STATUSES = ["PENDING", "SENT", "FAILED", "SKIPPED"] as const;
