/** The drizzle schema object: every table, for `drizzle(…, { schema })`. */
import { apiKeys } from "./schema/api-keys.ts";
import { creditLines } from "./schema/credit-lines.ts";
import { borrowerKycAudit, borrowers } from "./schema/borrowers.ts";
import { emailReleases } from "./schema/email-releases.ts";
import { emailVerifications } from "./schema/email-verifications.ts";
import { events } from "./schema/events.ts";
import { commercialTerms, kybSubmissions, operatorAudit } from "./schema/go-live.ts";
import { agreements, loanKycConfirmations, settlements } from "./schema/loan-records.ts";
import { loans } from "./schema/loans.ts";
import { policies } from "./schema/policies.ts";
import { chainBlocks, chainCursors, heldPayments, sandboxLedgers, unmatchedPayments } from "./schema/settlement-tracking.ts";
import { mailbox, notifications, webhookAttempts, webhookDeliveries, webhookEndpoints } from "./schema/webhooks.ts";
import { liquidityPools } from "./schema/liquidity-pools.ts";
import { loanProducts } from "./schema/loan-products.ts";
import { merchantConfigs } from "./schema/merchant-configs.ts";
import { tenantSettings } from "./schema/tenant-settings.ts";
import { tenants } from "./schema/tenants.ts";
import { users } from "./schema/users.ts";
import { walletSessionChallenges } from "./schema/wallet-session-challenges.ts";
import { widgetPrograms } from "./schema/widget-programs.ts";
import { signers, walletChallenges, wallets } from "./schema/wallets.ts";
import { tonTransfers, tonWalletCursors, tonWalletBacklogs, tonWalletReads } from "./schema/ton.ts";

export const schema = {
  tenants,
  users,
  emailVerifications,
  emailReleases,
  apiKeys,
  tenantSettings,
  merchantConfigs,
  loanProducts,
  widgetPrograms,
  liquidityPools,
  borrowers,
  borrowerKycAudit,
  policies,
  loans,
  loanKycConfirmations,
  agreements,
  settlements,
  events,
  webhookEndpoints,
  webhookDeliveries,
  webhookAttempts,
  notifications,
  mailbox,
  unmatchedPayments,
  chainCursors,
  chainBlocks,
  heldPayments,
  creditLines,
  walletSessionChallenges,
  sandboxLedgers,
  wallets,
  walletChallenges,
  signers,
  kybSubmissions,
  commercialTerms,
  operatorAudit,
  tonTransfers,
  tonWalletCursors,
  tonWalletBacklogs,
  tonWalletReads,
};
export type Schema = typeof schema;
