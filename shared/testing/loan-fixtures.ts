import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { LoanRow } from "../../db/schema/loans.ts";
import { createLoan as createLoanVerb } from "../loans/create-loan.ts";
import { bearer, createKey, signUpTenant } from "./fixtures.ts";
import type { TestApp, TestResponse } from "./harness.ts";

/** A fresh EIP-55 checksummed EVM address. */
export const newWallet = (): string => privateKeyToAccount(generatePrivateKey()).address;

/** A signed-up sandbox tenant with an API key: its owner's session, the key, and its loan product. */
export async function sandboxTenant(t: TestApp, companyName = "Acme Pay") {
  const owner = await signUpTenant(t, companyName);
  const { id: keyId, key } = await createKey(t, owner.token);
  const me = await t.request("GET", "/v1/me", { headers: bearer(owner.token) });
  if (me.status !== 200) throw new Error(`GET /v1/me failed: ${me.status} ${JSON.stringify(me.body)}`);
  const loanProductId = me.body.merchantConfigs[0].loanProductId as string;
  productOfKey.set(key, loanProductId);
  return { ...owner, key, keyId, loanProductId };
}

const productOfKey = new Map<string, string>();

async function loanProductFor(t: TestApp, key: string): Promise<string> {
  const known = productOfKey.get(key);
  if (known) return known;
  const me = await t.request("GET", "/v1/me", { headers: { "x-api-key": key } });
  if (me.status !== 200) throw new Error(`GET /v1/me failed: ${me.status} ${JSON.stringify(me.body)}`);
  const id = me.body.merchantConfigs[0].loanProductId as string;
  productOfKey.set(key, id);
  return id;
}

let counter = 0;

/**
 * POSTs a loan for the tenant of `key` with a valid body (its first loan
 * product, POLYGON_AMOY, 100.00, a fresh wallet, borrower and idempotency
 * key); `overrides` replace fields. Returns the raw response, so tests can
 * check any status.
 */
export async function createLoan(t: TestApp, key: string, overrides: Record<string, unknown> = {}): Promise<TestResponse> {
  const n = ++counter;
  const body = {
    loanProductId: await loanProductFor(t, key),
    borrowerRef: `borrower-${n}`,
    borrowerWalletAddress: newWallet(),
    chain: "POLYGON_AMOY",
    principalAmount: "100.00",
    idempotencyKey: `loan-${Date.now()}-${n}`,
    ...overrides,
  };
  return t.request("POST", "/v1/loans", { body, headers: { "x-api-key": key } });
}

/** Like `createLoan`, but throws unless the loan was created (201); returns the loan. */
export async function createdLoan(t: TestApp, key: string, overrides: Record<string, unknown> = {}) {
  const res = await createLoan(t, key, overrides);
  if (res.status !== 201) throw new Error(`create loan failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export const apiKey = (key: string) => ({ "x-api-key": key });

/**
 * The input of the `createLoan` verb (shared/loans/create-loan.ts) for a
 * sandbox tenant of `sandboxTenant`, with a sandbox key: its loan product,
 * POLYGON_AMOY, a fresh wallet, borrower ref and idempotency key, at the
 * test clock's now; `overrides` replace fields.
 */
export const loanCreation = (t: TestApp, m: { tenantId: string; loanProductId: string }, overrides: Record<string, unknown> = {}) => ({
  tenant: { id: m.tenantId, mode: "sandbox" as const, certifiedAt: null },
  loanProductId: m.loanProductId,
  borrowerRef: `borrower-${crypto.randomUUID()}`,
  borrowerWalletAddress: newWallet(),
  chain: "POLYGON_AMOY" as const,
  principalAmount: "100.00",
  idempotencyKey: `key-${crypto.randomUUID()}`,
  keyMode: "sandbox" as const,
  deployed: null,
  now: t.clock.now(),
  ...overrides,
});

/**
 * A loan row made by the creation verb itself, no HTTP (a fresh sandbox
 * tenant's, `loanCreation` with `overrides`): for the tests of the
 * statements a loan's changes write.
 */
export async function verbCreatedLoan(t: TestApp, overrides: Record<string, unknown> = {}): Promise<LoanRow> {
  const m = await sandboxTenant(t);
  return (await createLoanVerb({ db: t.db }, loanCreation(t, m, overrides))).loan;
}
