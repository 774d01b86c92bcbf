import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Address } from "@ton/core";
import { eq } from "drizzle-orm";
import { loans } from "../../../../db/schema/loans.ts";
import { wallets } from "../../../../db/schema/wallets.ts";
import { newId } from "../../../../shared/domain/ids.ts";
import { bearer } from "../../../../shared/testing/fixtures.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import { certifiedLiveTenant } from "../../../../shared/testing/live-tenants.ts";
import { createLoan, newWallet } from "../../../../shared/testing/loan-fixtures.ts";
import { MERCHANT_CONFIG_EXAMPLE } from "../../openapi-examples.ts";

/**
 * A loan's borrower wallet may not be one of the tenant's own registered
 * wallets on its chain (any role, not deleted): principal sent to the
 * lender's own DISBURSEMENT or COLLECTIONS wallet lends to nobody, and could
 * pass for a repayment. Compared as the chain compares addresses: EVM
 * without case, TON by the parsed account (raw and friendly forms alike).
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const addWallet = async (token: string, body: { chain: string; role: string; address: string }) => {
  const res = await t.request("POST", "/v1/wallets", { headers: bearer(token), body });
  expect(res.status).toBe(201);
  return res.body.id as string;
};

const refused = (message: RegExp) => ({ statusCode: 400, message: [expect.stringMatching(message)], error: "Bad Request" });

const loansOf = (tenantId: string) => t.db.select({ id: loans.id }).from(loans).where(eq(loans.tenantId, tenantId));

describe("POST /v1/loans: a borrower wallet that is the tenant's own", () => {
  test("EVM: the tenant's COLLECTIONS or DISBURSEMENT wallet, checksummed or lowercase, is 400 naming borrowerWalletAddress, and no loan", async () => {
    const m = await certifiedLiveTenant(t, "Own Wallet Ltd");
    const collections = newWallet();
    const disbursement = newWallet();
    await addWallet(m.token, { chain: "POLYGON", role: "COLLECTIONS", address: collections });
    await addWallet(m.token, { chain: "POLYGON", role: "DISBURSEMENT", address: disbursement.toLowerCase() });

    for (const [address, role] of [
      [collections.toLowerCase(), "COLLECTIONS"],
      [disbursement, "DISBURSEMENT"],
    ] as const) {
      const res = await createLoan(t, m.liveKey, { chain: "POLYGON", borrowerRef: await m.verifiedBorrower(), borrowerWalletAddress: address });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refused(new RegExp(`^borrowerWalletAddress: .*this tenant's own ${role} wallet on POLYGON`)));
    }
    // A row whose address is stored lowercase (not as the api stores it) is compared without case all the same.
    const stored = newWallet();
    const now = new Date();
    await t.db
      .insert(wallets)
      .values({ id: newId(), tenantId: m.tenantId, chain: "POLYGON", role: "TREASURY", address: stored.toLowerCase(), createdAt: now, updatedAt: now });
    const res = await createLoan(t, m.liveKey, { chain: "POLYGON", borrowerRef: await m.verifiedBorrower(), borrowerWalletAddress: stored });
    expect(res.body).toEqual(refused(/^borrowerWalletAddress: .*this tenant's own TREASURY wallet on POLYGON/));
    expect(await loansOf(m.tenantId)).toEqual([]);
  });

  test("an address holding several roles names them all; another chain's wallet, another tenant's, a deleted one: the loan is made", async () => {
    const m = await certifiedLiveTenant(t, "Own Wallet Roles Ltd");
    const shared = newWallet();
    await addWallet(m.token, { chain: "POLYGON", role: "COLLECTIONS", address: shared });
    await addWallet(m.token, { chain: "POLYGON", role: "GAS", address: shared });
    const both = await createLoan(t, m.liveKey, { chain: "POLYGON", borrowerRef: await m.verifiedBorrower(), borrowerWalletAddress: shared });
    expect(both.status).toBe(400);
    expect(both.body.message).toEqual([
      "borrowerWalletAddress: must be the borrower's own wallet, not this tenant's own COLLECTIONS and GAS wallet on POLYGON",
    ]);

    const onBase = newWallet();
    await addWallet(m.token, { chain: "BASE", role: "COLLECTIONS", address: onBase });
    const other = await certifiedLiveTenant(t, "Someone Else Ltd");
    const theirs = newWallet();
    await addWallet(other.token, { chain: "POLYGON", role: "COLLECTIONS", address: theirs });
    const gone = newWallet();
    const goneId = await addWallet(m.token, { chain: "POLYGON", role: "DISBURSEMENT", address: gone });
    expect((await t.request("DELETE", `/v1/wallets/${goneId}`, { headers: bearer(m.token) })).status).toBe(204);
    for (const address of [onBase, theirs, gone]) {
      const res = await createLoan(t, m.liveKey, { chain: "POLYGON", borrowerRef: await m.verifiedBorrower(), borrowerWalletAddress: address });
      expect(res.status).toBe(201);
    }
  });

  test("TON: the tenant's COLLECTIONS wallet registered in one form is refused in another (raw, bounceable, non-bounceable)", async () => {
    const m = await certifiedLiveTenant(t, "Own Ton Wallet Ltd");
    const product = await t.request("POST", "/v1/merchant-configs", {
      body: { ...MERCHANT_CONFIG_EXAMPLE, network: "TON", stablecoin: "USDT" },
      headers: bearer(m.token),
    });
    expect(product.status).toBe(201);
    const account = new Address(0, Buffer.from(crypto.getRandomValues(new Uint8Array(32))));
    await addWallet(m.token, { chain: "TON", role: "COLLECTIONS", address: account.toString({ bounceable: false }) });
    for (const address of [account.toRawString().toUpperCase(), account.toRawString(), account.toString({ bounceable: true, urlSafe: false })]) {
      const res = await createLoan(t, m.liveKey, {
        loanProductId: product.body.loanProductId,
        chain: "TON",
        borrowerRef: await m.verifiedBorrower(),
        borrowerWalletAddress: address,
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refused(/^borrowerWalletAddress: .*this tenant's own COLLECTIONS wallet on TON/));
    }
    expect(await loansOf(m.tenantId)).toEqual([]);
  });
});
