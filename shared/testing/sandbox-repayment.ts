import { expect } from "bun:test";
import type { PrivateKeyAccount } from "viem/accounts";
import { CHAIN_CONFIG } from "../chains/chain-config.ts";
import type { TestApp } from "./harness.ts";
import { apiKey } from "./loan-fixtures.ts";
import { signAsBorrower } from "./sign-as-borrower.ts";

/**
 * Repays a funded POLYGON_AMOY loan in full from the borrower's own account
 * on the simulated chain: the faucet tops the principal it received up by
 * `topUp` (the fee; 2.00 covers a 100.00 loan's), then the borrower signs
 * and sends each transaction of the loan's repayment instructions.
 */
export async function repayInSandbox(t: TestApp, key: string, account: PrivateKeyAccount, loanId: string, topUp = "2.00") {
  const faucet = await t.request("POST", "/v1/sandbox/chain/faucet", {
    body: { chain: "POLYGON_AMOY", address: account.address, amount: topUp },
    headers: apiKey(key),
  });
  expect(faucet.status).toBe(200);
  const instructions = await t.request("POST", `/v1/loans/${loanId}/repay`, { headers: apiKey(key) });
  expect(instructions.status).toBe(200);
  let nonce = 0;
  for (const tx of instructions.body.transactions as { to: string; data: string }[]) {
    const signedTransaction = await signAsBorrower(account, CHAIN_CONFIG.POLYGON_AMOY.chainId!, nonce++, tx);
    const sent = await t.request("POST", "/v1/sandbox/chain/transactions", { body: { chain: "POLYGON_AMOY", signedTransaction }, headers: apiKey(key) });
    expect(sent.body).toMatchObject({ status: "success" });
  }
}
