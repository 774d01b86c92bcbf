import { asc, eq } from "drizzle-orm";
import { notifications, webhookDeliveries } from "../../db/schema/webhooks.ts";
import { unmatchedPayments } from "../../db/schema/settlement-tracking.ts";
import { creditLineFor } from "../embed/credit-lines.ts";
import { programContext } from "../embed/program-context.ts";
import { newId } from "../domain/ids.ts";
import { addUserWithRole, bearer, createKey } from "./fixtures.ts";
import type { TestApp } from "./harness.ts";
import { apiKey, createdLoan, newWallet, sandboxTenant } from "./loan-fixtures.ts";

let counter = 0;

/**
 * A sandbox tenant holding one real resource of every kind a path parameter
 * can name: loan, borrower (id and ref), API key, merchant configuration,
 * widget program and embed key, webhook endpoint, delivery, event,
 * notification, unmatched payment, credit line and live wallet; with an OWNER session, a
 * MEMBER session and an API key. For the table-driven security suites and the
 * OpenAPI fuzzers, which need real ids rather than random ones.
 */
export async function seededTenant(t: TestApp, label = "Seeded") {
  const n = ++counter;
  const m = await sandboxTenant(t, `${label} ${n}`);
  const member = await addUserWithRole(t, m.token, "MEMBER");
  // A user the suites may change or remove (never the sessions they call with).
  const spareUser = await addUserWithRole(t, m.token, "MEMBER");
  // A second key, so that revoking "the" key of this tenant never locks the tenant out.
  const spareKey = await createKey(t, m.token, "spare");
  const webhook = await t.request("POST", "/v1/webhooks", { body: { url: "https://hooks.merchant.example/svc", events: ["*"] }, headers: apiKey(m.key) });
  if (webhook.status !== 201) throw new Error(`create webhook failed: ${webhook.status} ${JSON.stringify(webhook.body)}`);
  const borrowerRef = `seeded-borrower-${n}-${Date.now()}`;
  const loan = await createdLoan(t, m.key, { borrowerRef });
  const me = (await t.request("GET", "/v1/me", { headers: bearer(m.token) })).body;
  const program = me.widgetPrograms[0];
  const [delivery] = await t.db
    .select()
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.endpointId, webhook.body.id))
    .orderBy(asc(webhookDeliveries.createdAt))
    .limit(1);
  const [notification] = await t.db.select().from(notifications).where(eq(notifications.tenantId, m.tenantId)).limit(1);
  const events = (await t.request("GET", `/v1/events?loanId=${loan.id}`, { headers: apiKey(m.key) })).body.data as { id: string }[];
  const context = await programContext(t.db, program.embedKey);
  const wallet = newWallet();
  const creditLine = await creditLineFor({ db: t.db }, { program: context, wallet, now: t.clock.now() });
  // A payment the listener could not match, kept for this tenant (as a wrong comment would leave it).
  const unmatchedId = newId();
  await t.db.insert(unmatchedPayments).values({
    id: unmatchedId,
    tenantId: m.tenantId,
    chain: "POLYGON_AMOY",
    txHash: `0x${n.toString(16).padStart(64, "0")}`,
    logIndex: 0,
    blockNumber: 1,
    fromAddress: loan.borrowerWalletAddress,
    toAddress: newWallet(),
    token: newWallet(),
    amount: 1_000_000n,
    comment: "svc:repay:unknown",
    claimedLoanId: null,
    reason: "seeded for the security suite",
    paidAt: t.clock.now(),
    createdAt: t.clock.now(),
  });
  const liveWallet = await t.request("POST", "/v1/wallets", { body: { chain: "POLYGON", role: "GAS", address: newWallet() }, headers: bearer(m.token) });
  if (liveWallet.status !== 201) throw new Error(`create wallet failed: ${liveWallet.status} ${JSON.stringify(liveWallet.body)}`);
  const found = { delivery, notification, event: events[0] };
  for (const [what, row] of Object.entries(found)) if (!row) throw new Error(`seededTenant: no ${what} was made`);
  const borrower = (await t.request("GET", `/v1/borrowers/${encodeURIComponent(borrowerRef)}`, { headers: apiKey(m.key) })).body;
  return {
    ...m,
    member,
    spareUserId: spareUser.id,
    spareKeyId: spareKey.id,
    loan,
    loanId: loan.id as string,
    borrowerWalletAddress: loan.borrowerWalletAddress as string,
    borrowerId: borrower.id as string,
    borrowerRef,
    merchantConfigId: me.merchantConfigs[0].id as string,
    widgetProgramId: program.id as string,
    embedKey: program.embedKey as string,
    webhookId: webhook.body.id as string,
    deliveryId: delivery!.id,
    eventId: events[0]!.id,
    notificationId: notification!.id,
    unmatchedId,
    creditLineId: creditLine.id,
    creditLineWallet: wallet,
    walletId: liveWallet.body.id as string,
  };
}

export type SeededTenant = Awaited<ReturnType<typeof seededTenant>>;

/**
 * Which seeded resource a path parameter names, by "<segment before it>/{<name>}",
 * for the api and embed documents. A parameter not listed here makes the
 * security suites and fuzzers fail (they must not skip it silently): seed the
 * resource above and add a line.
 */
export const PARAM_RESOURCES: Record<string, (s: SeededTenant) => string[]> = {
  "loans/{id}": (s) => [s.loanId],
  "settlements/{loanId}": (s) => [s.loanId],
  "borrowers/{id}": (s) => [s.borrowerId, s.borrowerRef],
  "api-keys/{id}": (s) => [s.spareKeyId],
  "users/{id}": (s) => [s.spareUserId],
  "merchant-configs/{id}": (s) => [s.merchantConfigId],
  "widget-programs/{id}": (s) => [s.widgetProgramId],
  "credit-lines/{id}": (s) => [s.creditLineId],
  "unmatched/{id}": (s) => [s.unmatchedId],
  "events/{id}": (s) => [s.eventId],
  "webhooks/{id}": (s) => [s.webhookId],
  "deliveries/{id}": (s) => [s.deliveryId],
  "notifications/{id}": (s) => [s.notificationId],
  "wallets/{id}": (s) => [s.walletId],
  "embed/{embedKey}": (s) => [s.embedKey],
  "loans/{loanId}": (s) => [s.loanId],
  "repay/{loanId}": (s) => [s.loanId],
  // A wallet on the caller's own sandbox ledger: not a tenant's resource (the security suite checks another tenant's reads as nothing).
  "accounts/{address}": (s) => [s.borrowerWalletAddress],
  // The operator names any tenant: the security suite checks an unknown id instead of another tenant's.
  "tenants/{id}": (s) => [s.tenantId],
};

/** The key PARAM_RESOURCES knows a path parameter by: "<segment before it>/{<name>}". */
export function paramKey(path: string, name: string): string {
  const segments = path.split("/");
  return `${segments[segments.indexOf(`{${name}}`) - 1]}/{${name}}`;
}
