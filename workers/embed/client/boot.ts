import type { CHANNELS } from "../../../db/schema/loan-vocabularies.ts";
import type { WidgetConfig } from "../../../shared/embed/widget-config.ts";

/**
 * What the iframe page hands its script (a JSON block in the page): the
 * program's configuration as `GET …/config` answers it, and what the page
 * knows of its embedding. Shared by the server page and the browser app.
 */
export type WidgetBoot = {
  embedKey: string;
  /** WEB, IOS, ANDROID or PARTNER_WEBVIEW, from `?channel=` (default WEB). */
  channel: (typeof CHANNELS)[number];
  /** The embedding page's exact origin from `?parent=`, only when it is one of the program's origins; else null (no message is posted). */
  parentOrigin: string | null;
  /** `/v1/embed/<key>` on the widget's own origin. */
  apiBase: string;
  /** `/embed/<key>/repay/` + loan id: the hosted repayment page. */
  repayPath: string;
  config: WidgetConfig;
  family: "EVM" | "TON" | "SOLANA";
  /** EVM: the chain id the wallet signs and pays on. */
  evmChainId: number | null;
  /** WalletConnect Cloud project id (var WALLETCONNECT_PROJECT_ID); null: no WalletConnect. */
  walletConnectProjectId: string | null;
  /** TON Connect manifest of this program (absolute URL). */
  tonManifestUrl: string;
};

/** `svc:*` messages the widget posts to its parent (target: the parent's exact origin). */
export type WidgetMessage =
  | { type: "svc:ready" }
  | { type: "svc:resize"; height: number }
  | { type: "svc:kyc-required"; creditLineId: string; walletAddress: string }
  | { type: "svc:loan-created"; loanId: string; status: string }
  | { type: "svc:loan-funded"; loanId: string; fundingTxHash: string | null }
  /** Posted by the hosted repayment page when it is opened from the widget. */
  | { type: "svc:loan-repaid"; loanId: string };
