/** What `GET /v1/go-live` answers (the fields the page reads). */
export type GoLive = {
  mode: "sandbox" | "live";
  certifiedAt: string | null;
  nextStep: string | null;
  steps: { step: number; key: string; title: string; status: "DONE" | "PENDING" | "BLOCKED"; detail: string; completedAt: string | null }[];
  audit: { id: string; action: string; decision: string | null; note: string | null; actor: string; at: string }[];
};

/** A live wallet as `GET /v1/wallets` shows it. */
export type Wallet = {
  id: string;
  chain: "POLYGON" | "BASE" | "TON";
  role: "TREASURY" | "DISBURSEMENT" | "COLLECTIONS" | "GAS";
  address: string;
  controlVerified: boolean;
  verifiedAt: string | null;
  stablecoinBalance: string | null;
  nativeBalance: string | null;
  gasThreshold: string | null;
  createdAt: string;
};

export type WalletChallenge = { id: string; message: string; expiresAt: string };
