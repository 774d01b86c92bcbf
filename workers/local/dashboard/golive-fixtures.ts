import { expect } from "bun:test";
import type { Page } from "playwright-core";
import type { Hex, PrivateKeyAccount } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { CHAIN_CONFIG } from "../../../shared/chains/chain-config.ts";
import { GO_LIVE_STEP_KEYS } from "../../../shared/domain/go-live.ts";
import type { TestStack } from "../integration.ts";

/** API-side helpers of the Home and Go live browser tests: a session's requests, the operator, a sandbox loan repaid. */
export const OPERATOR = { "x-operator-key": "svc_operator_dev" };

/** Logs in through the API (as a script of the member's or owner's could): the session's token and request helper. */
export async function apiSession(stack: TestStack, email: string, password: string) {
  const login = await stack.fetch("/v1/auth/login", { json: { email, password } });
  expect(login.status).toBe(200);
  const token = login.body.accessToken as string;
  const call = (path: string, json?: unknown, method?: string) => stack.fetch(path, { json, method, headers: { authorization: `Bearer ${token}` } });
  const me = (await call("/v1/me")).body;
  return { token, call, tenantId: me.tenant.id as string, loanProductId: me.merchantConfigs[0].loanProductId as string };
}

/** "DONE" × done, then "PENDING", then "BLOCKED" × the rest: the checklist after `done` steps. */
export const statusesAfter = (done: number) => GO_LIVE_STEP_KEYS.map((_, i) => (i < done ? "DONE" : i === done ? "PENDING" : "BLOCKED"));

/** The step statuses the Go live page shows, in its order. */
export const shownStatuses = (page: Page) => page.locator("ol.steps > li").evaluateAll((items) => items.map((li) => li.getAttribute("data-status")));

/** A sandbox POLYGON_AMOY loan of 100.00 funded, then repaid in full by its borrower signing the API's instructions. */
export async function sandboxLoanRepaid(stack: TestStack, apiKey: string, loanProductId: string): Promise<string> {
  const api = (path: string, json?: unknown) => stack.fetch(path, { json, method: "POST", headers: { "x-api-key": apiKey } });
  const borrower: PrivateKeyAccount = privateKeyToAccount(generatePrivateKey());
  const loan = await api("/v1/loans", {
    loanProductId,
    borrowerRef: "go-live-cycle",
    borrowerWalletAddress: borrower.address,
    chain: "POLYGON_AMOY",
    principalAmount: "100.00",
    idempotencyKey: `go-live-${Date.now()}`,
  });
  expect(loan.body).toMatchObject({ status: "ACTIVE" });
  expect((await api("/v1/sandbox/chain/faucet", { chain: "POLYGON_AMOY", address: borrower.address, amount: "2.00" })).status).toBe(200);
  const instructions = (await api(`/v1/loans/${loan.body.id}/repay`)).body;
  for (const [nonce, tx] of (instructions.transactions as { to: Hex; data: Hex }[]).entries()) {
    const signedTransaction = await borrower.signTransaction({
      chainId: CHAIN_CONFIG.POLYGON_AMOY.chainId!,
      nonce,
      to: tx.to,
      data: tx.data,
      value: 0n,
      gas: 200_000n,
      maxFeePerGas: 1n,
      maxPriorityFeePerGas: 1n,
      type: "eip1559",
    });
    expect((await api("/v1/sandbox/chain/transactions", { chain: "POLYGON_AMOY", signedTransaction })).body).toMatchObject({ status: "success" });
  }
  return loan.body.id as string;
}
