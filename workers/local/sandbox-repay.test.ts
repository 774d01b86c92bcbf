import { afterAll, beforeAll, expect, test } from "bun:test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { testSolanaWallet } from "../../shared/agreements/testing/test-wallets.ts";
import { createKey, signUpTenant } from "../../shared/testing/fixtures.ts";
import { createTestApp, type TestApp } from "../../shared/testing/harness.ts";
import { type ApiCall, sandboxRepay } from "./sandbox-repay.ts";

/** The README's happy path to its end: `npm run sandbox:repay` takes a funded sandbox loan to REPAID, as its borrower would. */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function merchant() {
  const owner = await signUpTenant(t);
  const { key } = await createKey(t, owner.token);
  const call: ApiCall = (method, path, body) => t.request(method, path, { body, headers: { "x-api-key": key } });
  const productId = (await call("GET", "/v1/me")).body.merchantConfigs[0].loanProductId as string;
  const lend = async (chain: string, borrowerWalletAddress: string) => {
    const res = await call("POST", "/v1/loans", {
      loanProductId: productId,
      borrowerRef: `ref-${crypto.randomUUID()}`,
      borrowerWalletAddress,
      chain,
      principalAmount: "100.00",
      idempotencyKey: crypto.randomUUID(),
    });
    expect(res.body).toMatchObject({ status: "ACTIVE" });
    return res.body as { id: string };
  };
  return { call, lend };
}

test("EVM: the borrower's key signs the approve and the pool's repay; the faucet adds the fee; REPAID with loan.repaid, the loan id unchanged", async () => {
  const m = await merchant();
  const key = generatePrivateKey();
  const loan = await m.lend("POLYGON_AMOY", privateKeyToAccount(key).address);
  const repaid = await sandboxRepay(m.call, { loanId: loan.id, privateKey: key });
  expect(repaid).toMatchObject({ id: loan.id, status: "REPAID", amountPaid: "102.00", amountDue: "0.00" });
  const types = (await m.call("GET", `/v1/events?loanId=${loan.id}`)).body.data.map((e: { type: string }) => e.type);
  expect(types).toContain("loan.repaid");

  // A wallet that has sent transactions before: its next nonce is found. Another key than the borrower's: refused, nothing sent.
  const second = await m.lend("POLYGON_AMOY", privateKeyToAccount(key).address);
  await expect(sandboxRepay(m.call, { loanId: second.id, privateKey: generatePrivateKey() })).rejects.toThrow(/not the borrower's/);
  expect(await sandboxRepay(m.call, { loanId: second.id, privateKey: key })).toMatchObject({ status: "REPAID", amountDue: "0.00" });
});

test("SOLANA_DEVNET: a transfer with the instructions' memo, no key needed in the sandbox", async () => {
  const m = await merchant();
  const loan = await m.lend("SOLANA_DEVNET", (await testSolanaWallet()).address);
  expect(await sandboxRepay(m.call, { loanId: loan.id })).toMatchObject({ id: loan.id, status: "REPAID", amountDue: "0.00" });
});
