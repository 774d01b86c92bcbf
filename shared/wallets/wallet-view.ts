import type { WalletBalances } from "../chains/chain-port.ts";
import { chainConfig } from "../chains/chain-config.ts";
import type { Chain } from "../domain/rails.ts";
import { formatBaseUnits, type LIVE_WALLET_CHAINS, nativeDecimals, type WalletRole } from "../domain/wallets.ts";

/**
 * A live wallet as the API shows it (WalletSchema in shared/schemas/wallet.ts)
 * and as `wallet.gas_low` carries it. Kept apart from the schema so the cron
 * worker's gas job builds it without the OpenAPI library.
 */
export type WalletView = {
  id: string;
  chain: (typeof LIVE_WALLET_CHAINS)[number];
  role: WalletRole;
  address: string;
  controlVerified: boolean;
  verifiedAt: string | null;
  stablecoinBalance: string | null;
  nativeBalance: string | null;
  gasThreshold: string | null;
  createdAt: string;
};

/** The response body of a wallet with the balances read for it (null: not read). */
export function walletView(
  w: { id: string; chain: Chain; role: WalletRole; address: string; verifiedAt: Date | null; gasThreshold: string | null; createdAt: Date },
  balances: WalletBalances | null,
): WalletView {
  const native = nativeDecimals(w.chain);
  return {
    id: w.id,
    chain: w.chain as WalletView["chain"],
    role: w.role,
    address: w.address,
    controlVerified: w.verifiedAt !== null,
    verifiedAt: w.verifiedAt ? w.verifiedAt.toISOString() : null,
    stablecoinBalance: balances ? formatBaseUnits(balances.stablecoin, chainConfig(w.chain).token.decimals, 2) : null,
    nativeBalance: balances ? formatBaseUnits(balances.native, native) : null,
    gasThreshold: w.gasThreshold === null ? null : formatBaseUnits(BigInt(w.gasThreshold), native),
    createdAt: w.createdAt.toISOString(),
  };
}
