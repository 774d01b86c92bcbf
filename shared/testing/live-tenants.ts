import { expect } from "bun:test";
import { eq } from "drizzle-orm";
import type { PrivateKeyAccount } from "viem/accounts";
import { tenants } from "../../db/schema/tenants.ts";
import { DEV_OPERATOR_KEY, OPERATOR_KEY_HEADER } from "../auth/operator-key.ts";
import { bearer } from "./fixtures.ts";
import type { TestApp } from "./harness.ts";
import { apiKey, sandboxTenant } from "./loan-fixtures.ts";

/** The operator's headers under development (`svc_operator_dev`). */
export const OPERATOR_HEADERS = { [OPERATOR_KEY_HEADER]: DEV_OPERATOR_KEY };

let borrowerRefs = 0;

/**
 * A certified tenant (certification written to the database; the go-live walk
 * is tested on its own) with a live API key and the KYC policy live lending
 * requires (DECISIONS.md "Go-live certification": safe defaults), and
 * `verifiedBorrower()`, a fresh borrower ref whose KYC is VERIFIED.
 */
export async function certifiedLiveTenant(t: TestApp, name = "Live Ltd") {
  const m = await sandboxTenant(t, name);
  await t.db.update(tenants).set({ certifiedAt: new Date(), mode: "live" }).where(eq(tenants.id, m.tenantId));
  const created = await t.request("POST", "/v1/api-keys", { body: { name: "live backend", mode: "live" }, headers: bearer(m.token) });
  expect(created.status).toBe(201);
  const liveKey = created.body.key as string;
  const policy = { requireKycVerified: true, manualReviewAbove: null, maxOpenLoansPerBorrower: null, blockedWallets: [] };
  expect((await t.request("PUT", "/v1/policies", { body: policy, headers: apiKey(liveKey) })).status).toBe(200);
  const verifiedBorrower = async (prefix = "live-borrower") => {
    const ref = `${prefix}-${++borrowerRefs}`;
    const kyc = { status: "VERIFIED", merchantUserId: "compliance-1" };
    expect((await t.request("PATCH", `/v1/borrowers/${ref}/kyc`, { body: kyc, headers: apiKey(liveKey) })).status).toBe(200);
    return ref;
  };
  return { ...m, liveKey, verifiedBorrower };
}

/** Adds an EVM wallet of `role` on `chain` and proves control with `account`'s EIP-191 signature of the challenge; its id. */
export async function verifiedEvmWallet(t: TestApp, token: string, input: { chain: string; role: string; account: PrivateKeyAccount }): Promise<string> {
  const wallet = await t.request("POST", "/v1/wallets", {
    headers: bearer(token),
    body: { chain: input.chain, role: input.role, address: input.account.address },
  });
  expect(wallet.status).toBe(201);
  const challenge = await t.request("POST", `/v1/wallets/${wallet.body.id}/challenge`, { headers: bearer(token) });
  const signature = await input.account.signMessage({ message: challenge.body.message });
  const verified = await t.request("POST", `/v1/wallets/${wallet.body.id}/verify`, {
    headers: bearer(token),
    body: { challengeId: challenge.body.id, signature },
  });
  expect(verified.status).toBe(200);
  return wallet.body.id as string;
}

/** The operator installs the signer of `address` for the tenant (201 expected). */
export async function installSigner(t: TestApp, tenantId: string, signer: { chain: string; address: string; privateKey: string }): Promise<void> {
  expect((await t.request("POST", `/v1/operator/tenants/${tenantId}/signers`, { body: signer, headers: OPERATOR_HEADERS })).status).toBe(201);
}
