/** Vocabularies of loans and their money movements (plain arrays, no imports). */
export const CHANNELS = ["WEB", "IOS", "ANDROID", "PARTNER_WEBVIEW"] as const;
/**
 * Where funding of an approved loan stands: NONE (not attempted), WAITING_KYC
 * (the loan-level KYC gate is closed), AWAITING_LIQUIDITY (no headroom; retried
 * when liquidity returns), HELD (a decline rule fires now: the borrower's KYC,
 * a blocked wallet, the live KYC requirement; retried, and funded once it no
 * longer fires), RESERVED (principal reserved in the pool, transfer under
 * way), FUNDED.
 */
export const FUNDING_STATES = ["NONE", "WAITING_KYC", "AWAITING_LIQUIDITY", "HELD", "RESERVED", "FUNDED"] as const;
/**
 * FUNDING (principal out), REPAYMENT (the payment that settled the loan),
 * PARTIAL_REPAYMENT, SURPLUS (received beyond the total due: refundable),
 * REFUND (a surplus paid back).
 */
export const SETTLEMENT_KINDS = ["FUNDING", "REPAYMENT", "PARTIAL_REPAYMENT", "SURPLUS", "REFUND"] as const;
/** REVERSED: a live repayment whose block a reorg orphaned; it no longer counts (evm-listener.ts). */
export const SETTLEMENT_STATUSES = ["CONFIRMED", "FAILED", "REVERSED"] as const;
