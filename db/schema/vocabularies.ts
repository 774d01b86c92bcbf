/**
 * The status and enum vocabularies the schema stores. Plain `as const`
 * arrays with no imports, so the pure domain in shared/ can use them too.
 */
export const NETWORKS = ["TON", "POLYGON", "BASE"] as const;
export const STABLECOINS = ["USDT", "USDC"] as const;
export const CHAINS = ["POLYGON_AMOY", "BASE_SEPOLIA", "SOLANA_DEVNET", "TON_TESTNET", "POLYGON", "BASE", "TON"] as const;
export const TENANT_MODES = ["sandbox", "live"] as const;
export const FEE_TYPES = ["FIXED", "PERCENTAGE"] as const;
export const ROLES = ["OWNER", "ADMIN", "MEMBER"] as const;
export const LOAN_PRODUCT_STATUSES = ["ACTIVE", "INACTIVE"] as const;

export type Role = (typeof ROLES)[number];
