import type { Context } from "hono";

/** The tags of the api document, declared with what each holds (every operation's tag is one of these). */
export const API_TAGS = [
  { name: "Platform", description: "Liveness of the api worker, and the chains this deployment is configured for." },
  { name: "Dashboard identity", description: "Signup, login, e-mail verification, users and API keys: a tenant's people and its backend's credentials." },
  { name: "Merchant configuration", description: "Loan products (merchant configurations), tenant settings and widget programs." },
  { name: "Loans", description: "Creating, reviewing and reading loans; KYC confirmation and the borrower's signed agreement." },
  { name: "Repayment", description: "Repayment instructions and the settlement of payments that matched no loan." },
  { name: "Embed and widget", description: "The merchant backend's part of the widget's flow (credit-line KYC)." },
  { name: "Underwriting", description: "The tenant's versioned underwriting policy." },
  { name: "Borrowers", description: "Borrowers and their KYC state." },
  { name: "Events", description: "The tenant's event log, the same events webhooks deliver." },
  { name: "Webhooks", description: "Webhook endpoints and their deliveries (signed with HMAC-SHA256 and the Standard Webhooks headers)." },
  { name: "Notifications", description: "The dashboard's notifications." },
  {
    name: "Sandbox",
    description: "Sandbox API keys only (a live key gets 403): the simulated chains' faucet and transfers, the tenant's clock and the pool's liquidity.",
  },
  { name: "Wallets", description: "The tenant's own wallets on live chains: roles, proof of control by a signed challenge, balances and GAS thresholds." },
  { name: "Go live", description: "The tenant's go-live certification: the 10 steps, its KYB and the operator's audit." },
  { name: "Platform operator", description: "The platform operator (`x-operator-key`): KYB decisions and commercial terms, every action audited." },
  { name: "Development", description: "Local development only: the mailbox of e-mails the platform sent." },
];

/**
 * The api document's top level. `servers` is the origin the document was
 * fetched from (`{base_url}`), so a generated client calls the host that
 * served it, whatever the deployment.
 */
export function apiDocumentConfig(c: Context) {
  const origin = new URL(c.req.url).origin;
  return {
    openapi: "3.1.0",
    info: {
      title: "svc credit API",
      version: "v1",
      description: [
        "Embedded, non-custodial stablecoin credit for merchants.",
        "",
        "Errors always have the body `{ statusCode, message, error }`; for validation failures `message` is an array with one string per bad field, each starting with the field's path.",
        "Every response carries `x-request-id`. Amounts are decimal strings; internally integer 10^-6 units.",
        "Lists return `{ data, nextCursor }`, newest first, `limit` 1..100 (default 20).",
        "Rate limits: per API key (or dashboard user), per tenant over all its keys and users, per client IP on unauthenticated routes, signups per client IP, logins per account, and failed authentications per client IP (past that budget the IP's credentialed requests get 429 before any lookup); a 429 carries `Retry-After` in seconds. Bodies over 64 KiB: 413.",
        "The public widget calls (`/v1/embed/:embedKey/…`) are documented in the embed worker's document: `{embed_url}/openapi.json`.",
        "Every operation has a stable `operationId` (`<resource>.<verb>`, e.g. `loans.create`): generated clients name their methods after it.",
      ].join("\n"),
      contact: { name: "svc credit", url: `${origin}/docs` },
      // No public licence: SPDX names an unlisted one with a LicenseRef- identifier.
      license: { name: "Proprietary: use under the merchant agreement with svc credit", identifier: "LicenseRef-svc-credit-merchant-agreement" },
    },
    servers: [{ url: origin, description: "This deployment's api ({base_url})" }],
    tags: API_TAGS,
  };
}
