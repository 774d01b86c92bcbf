import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./context.ts";
import type { DefinedRoute } from "./route.ts";
import * as createApiKey from "./routes/api-keys/create-api-key.ts";
import * as listApiKeys from "./routes/api-keys/list-api-keys.ts";
import * as revokeApiKey from "./routes/api-keys/revoke-api-key.ts";
import * as logIn from "./routes/auth/log-in.ts";
import * as signUp from "./routes/auth/sign-up.ts";
import * as verifyEmail from "./routes/auth/verify-email.ts";
import * as verifyEmailPage from "./routes/auth/verify-email-page.ts";
import * as resendVerification from "./routes/auth/resend-verification.ts";
import * as requestEmailRelease from "./routes/auth/release-email.ts";
import * as releaseEmailPage from "./routes/auth/release-email-page.ts";
import * as confirmEmailRelease from "./routes/auth/confirm-release-email.ts";
import * as getHealth from "./routes/health/get-health.ts";
import * as listChains from "./routes/chains/list-chains.ts";
import * as confirmCreditLineKyc from "./routes/credit-lines/confirm-credit-line-kyc.ts";
import * as repayLoan from "./routes/loans/repay-loan.ts";
import * as chainAccount from "./routes/sandbox/chain-account.ts";
import * as chainFaucet from "./routes/sandbox/chain-faucet.ts";
import * as chainTransaction from "./routes/sandbox/chain-transaction.ts";
import * as chainTransfer from "./routes/sandbox/chain-transfer.ts";
import * as attributeUnmatched from "./routes/settlements/attribute-unmatched.ts";
import * as listUnmatched from "./routes/settlements/list-unmatched.ts";
import * as confirmKyc from "./routes/loans/confirm-kyc.ts";
import * as createAgreementChallenge from "./routes/loans/create-agreement-challenge.ts";
import * as createLoan from "./routes/loans/create-loan.ts";
import * as getLoan from "./routes/loans/get-loan.ts";
import * as listLoans from "./routes/loans/list-loans.ts";
import * as recordAgreement from "./routes/loans/record-agreement.ts";
import * as reviewLoan from "./routes/loans/review-loan.ts";
import * as getMe from "./routes/me/get-me.ts";
import * as createUser from "./routes/users/create-user.ts";
import * as removeUser from "./routes/users/remove-user.ts";
import * as changeUserRole from "./routes/users/change-role.ts";
import * as logOut from "./routes/auth/log-out.ts";
import * as changePassword from "./routes/auth/change-password.ts";
import * as listUsers from "./routes/users/list-users.ts";
import * as createMerchantConfig from "./routes/merchant-configs/create-merchant-config.ts";
import * as getMerchantConfig from "./routes/merchant-configs/get-merchant-config.ts";
import * as listMerchantConfigs from "./routes/merchant-configs/list-merchant-configs.ts";
import * as updateMerchantConfig from "./routes/merchant-configs/update-merchant-config.ts";
import * as getSettings from "./routes/settings/get-settings.ts";
import * as updateSettings from "./routes/settings/update-settings.ts";
import * as createWidgetProgram from "./routes/widget-programs/create-widget-program.ts";
import * as deleteWidgetProgram from "./routes/widget-programs/delete-widget-program.ts";
import * as getWidgetProgram from "./routes/widget-programs/get-widget-program.ts";
import * as listWidgetPrograms from "./routes/widget-programs/list-widget-programs.ts";
import * as updateWidgetProgram from "./routes/widget-programs/update-widget-program.ts";
import * as getPolicy from "./routes/policies/get-policy.ts";
import * as putPolicy from "./routes/policies/put-policy.ts";
import * as listPolicyVersions from "./routes/policies/list-policy-versions.ts";
import * as getBorrower from "./routes/borrowers/get-borrower.ts";
import * as setBorrowerKyc from "./routes/borrowers/set-borrower-kyc.ts";
import * as getSandboxClock from "./routes/sandbox/get-clock.ts";
import * as advanceSandboxClock from "./routes/sandbox/advance-clock.ts";
import * as setSandboxLiquidity from "./routes/sandbox/set-liquidity.ts";
import * as listEvents from "./routes/events/list-events.ts";
import * as getEvent from "./routes/events/get-event.ts";
import * as getSettlements from "./routes/settlements/get-settlements.ts";
import * as createWebhook from "./routes/webhooks/create-webhook.ts";
import * as listWebhooks from "./routes/webhooks/list-webhooks.ts";
import * as deleteWebhook from "./routes/webhooks/delete-webhook.ts";
import * as listDeliveries from "./routes/webhooks/list-deliveries.ts";
import * as redeliverDelivery from "./routes/webhooks/redeliver-delivery.ts";
import * as testWebhook from "./routes/webhooks/test-webhook.ts";
import * as listNotifications from "./routes/notifications/list-notifications.ts";
import * as readAllNotifications from "./routes/notifications/read-all-notifications.ts";
import * as readNotification from "./routes/notifications/read-notification.ts";
import * as getDevMailbox from "./routes/dev/get-mailbox.ts";
import * as listWallets from "./routes/wallets/list-wallets.ts";
import * as createWallet from "./routes/wallets/create-wallet.ts";
import * as getWallet from "./routes/wallets/get-wallet.ts";
import * as updateWallet from "./routes/wallets/update-wallet.ts";
import * as deleteWallet from "./routes/wallets/delete-wallet.ts";
import * as createWalletChallenge from "./routes/wallets/create-wallet-challenge.ts";
import * as verifyWallet from "./routes/wallets/verify-wallet.ts";
import * as getGoLive from "./routes/go-live/get-go-live.ts";
import * as submitKyb from "./routes/go-live/submit-kyb.ts";
import * as certifyGoLive from "./routes/go-live/certify.ts";
import * as getTodayStats from "./routes/stats/get-today-stats.ts";
import * as listOperatorTenants from "./routes/operator/list-tenants.ts";
import * as decideOperatorKyb from "./routes/operator/decide-kyb.ts";
import * as recordCommercialTerms from "./routes/operator/record-commercial-terms.ts";
import * as installOperatorSigner from "./routes/operator/install-signer.ts";
import * as listHeldPayments from "./routes/operator/list-held-payments.ts";

/** One operation: its route (method, path, schemas and auth spec) and how it registers its handler. */
export type ApiRouteModule = { route: DefinedRoute; register: (app: OpenAPIHono<AppEnv>) => unknown };

/**
 * Every route of the api worker, in registration order. One module per
 * operation, each exporting `route` (from `defineRoute`, carrying its auth
 * spec) and `register`; the security suite walks this table.
 */
export const ROUTES: ApiRouteModule[] = [
  getHealth,
  listChains,
  signUp,
  logIn,
  verifyEmailPage,
  verifyEmail,
  resendVerification,
  requestEmailRelease,
  releaseEmailPage,
  confirmEmailRelease,
  logOut,
  changePassword,
  getMe,
  createUser,
  listUsers,
  changeUserRole,
  removeUser,
  createApiKey,
  listApiKeys,
  revokeApiKey,
  listMerchantConfigs,
  createMerchantConfig,
  getMerchantConfig,
  updateMerchantConfig,
  getSettings,
  updateSettings,
  listWidgetPrograms,
  createWidgetProgram,
  getWidgetProgram,
  updateWidgetProgram,
  deleteWidgetProgram,
  createLoan,
  listLoans,
  getLoan,
  reviewLoan,
  confirmKyc,
  createAgreementChallenge,
  recordAgreement,
  repayLoan,
  confirmCreditLineKyc,
  chainFaucet,
  chainAccount,
  chainTransfer,
  chainTransaction,
  // Before GET /v1/settlements/{loanId}, so that "unmatched" is not taken for a loan id.
  listUnmatched,
  attributeUnmatched,
  getPolicy,
  putPolicy,
  listPolicyVersions,
  getBorrower,
  setBorrowerKyc,
  getSandboxClock,
  advanceSandboxClock,
  setSandboxLiquidity,
  listEvents,
  getEvent,
  getSettlements,
  createWebhook,
  listWebhooks,
  listDeliveries,
  redeliverDelivery,
  testWebhook,
  deleteWebhook,
  listNotifications,
  readAllNotifications,
  readNotification,
  getDevMailbox,
  listWallets,
  createWallet,
  getWallet,
  updateWallet,
  deleteWallet,
  createWalletChallenge,
  verifyWallet,
  getGoLive,
  submitKyb,
  certifyGoLive,
  getTodayStats,
  listOperatorTenants,
  decideOperatorKyb,
  recordCommercialTerms,
  installOperatorSigner,
  listHeldPayments,
];
