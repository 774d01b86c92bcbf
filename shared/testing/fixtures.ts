import { eq, sql } from "drizzle-orm";
import type { Role } from "../../db/schema/users.ts";
import { mailbox, webhookEndpoints } from "../../db/schema/webhooks.ts";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { DEV_SECRETS_KEY, sealSecret } from "../crypto/secret-box.ts";
import { newId } from "../domain/ids.ts";
import { generateWebhookSecret } from "../webhooks/signing.ts";
import type { TestApp } from "./harness.ts";

export const PASSWORD = "correct horse battery staple";

let counter = 0;
export const uniqueEmail = (label = "owner") => `${label}.${Date.now()}.${++counter}@merchant.example`;

/** The token of the newest verification link e-mailed to `email` (from the local mailbox), or null. */
export async function verificationTokenFor(t: TestApp, email: string): Promise<string | null> {
  // rowid: insertion order (the tests' clock stands still, so createdAt does not tell).
  const mails = await t.db.select({ body: mailbox.body }).from(mailbox).where(eq(mailbox.toAddress, email.toLowerCase())).orderBy(sql`rowid DESC`);
  for (const m of mails) {
    const token = /verify-email\?token=([0-9A-Za-z]+)/.exec(m.body)?.[1];
    if (token) return token;
  }
  return null;
}

/**
 * Signs up a tenant and returns its owner's session. The owner's e-mail is
 * verified through the real link (as a merchant would), unless
 * `verifyEmail: false`: until it is, no notification e-mail is sent.
 */
export async function signUpTenant(t: TestApp, companyName = "Acme Pay", options: { verifyEmail?: boolean } = {}) {
  const email = uniqueEmail();
  const res = await t.request("POST", "/v1/auth/signup", { body: { email, password: PASSWORD, companyName } });
  if (res.status !== 201) throw new Error(`signup failed: ${res.status} ${JSON.stringify(res.body)}`);
  if (options.verifyEmail ?? true) {
    const token = await verificationTokenFor(t, email);
    const verified = await t.request("POST", "/v1/auth/verify-email", { body: { token } });
    if (verified.status !== 200) throw new Error(`verify e-mail failed: ${verified.status} ${JSON.stringify(verified.body)}`);
  }
  return { email, token: res.body.accessToken as string, tenantId: res.body.tenant.id as string, userId: res.body.user.id as string };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Adds a user with `role` through the API and logs them in. */
export async function addUserWithRole(t: TestApp, ownerToken: string, role: Role) {
  const email = uniqueEmail(role.toLowerCase());
  const created = await t.request("POST", "/v1/users", { body: { email, password: PASSWORD, role }, headers: bearer(ownerToken) });
  if (created.status !== 201) throw new Error(`add user failed: ${created.status} ${JSON.stringify(created.body)}`);
  const login = await t.request("POST", "/v1/auth/login", { body: { email, password: PASSWORD } });
  return { id: created.body.id as string, email, token: login.body.accessToken as string };
}

/** Creates an API key with the owner's session; returns the secret and its id. */
export async function createKey(t: TestApp, ownerToken: string, name = "backend") {
  const res = await t.request("POST", "/v1/api-keys", { body: { name }, headers: bearer(ownerToken) });
  if (res.status !== 201) throw new Error(`create key failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.id as string, key: res.body.key as string };
}

/** A webhook endpoint of the tenant written straight into the database (the delivery tests' receivers are fakes, not URLs the route would accept); with its secret. */
export async function insertWebhookEndpoint(t: TestApp, tenantId: string, url: string, events: string[] = ["*"]) {
  const id = newId();
  const secret = generateWebhookSecret();
  await t.db.insert(webhookEndpoints).values({
    id,
    tenantId,
    url,
    events,
    secretCiphertext: await sealSecret(secret, DEV_SECRETS_KEY),
    secretPrefix: secret.slice(0, 12),
    createdAt: new Date(),
  });
  return { id, secret };
}

/** A sandbox loan of 100.00 through the API with the tenant's first product (created, approved, funded: three events); its answer. */
export async function createSandboxLoan(t: TestApp, key: string) {
  const me = await t.request("GET", "/v1/me", { headers: { "x-api-key": key } });
  const loan = await t.request("POST", "/v1/loans", {
    headers: { "x-api-key": key },
    body: {
      loanProductId: me.body.merchantConfigs[0].loanProductId,
      borrowerRef: "b",
      borrowerWalletAddress: privateKeyToAccount(generatePrivateKey()).address,
      chain: "POLYGON_AMOY",
      principalAmount: "100.00",
      idempotencyKey: newId(),
    },
  });
  if (loan.status !== 201) throw new Error(`create loan failed: ${loan.status} ${JSON.stringify(loan.body)}`);
  return loan.body;
}
