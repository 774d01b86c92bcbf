import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { CHAIN_CONFIG } from "../../../shared/chains/chain-config.ts";
import { signAsBorrower } from "../../../shared/testing/sign-as-borrower.ts";
import { httpClient, type StackRequest, type StackResponse } from "../integration.ts";

export type Merchant = Awaited<ReturnType<typeof merchantWithEndpoints>>;

/**
 * A fresh merchant on the stack at `baseUrl` (signup, an API key), its
 * webhook endpoints subscribed to every event. Every step is retried through
 * faults (a signup whose answer was lost is logged into instead; endpoints
 * created twice are deleted down to one), since faults are on from the start.
 * The owner's e-mail stays unverified: no owner e-mail is sent.
 */
export async function merchantWithEndpoints(baseUrl: string, urls: string[]) {
  const fetch = httpClient(baseUrl);
  const email = `chaos.${crypto.randomUUID()}@merchant.example`;
  const credentials = { email, password: "correct horse battery staple" };
  let session = await persist(() => fetch("/v1/auth/signup", { json: { ...credentials, companyName: "Chaos" } }));
  if (session.status === 409) session = await persist(() => fetch("/v1/auth/login", { json: credentials }));
  if (session.status !== 201 && session.status !== 200) throw new Error(`signup: ${session.status} ${JSON.stringify(session.body)}`);
  const token = session.body.accessToken as string;
  const dashboard = <T = any>(path: string, init: StackRequest = {}) =>
    fetch<T>(path, { ...init, headers: { authorization: `Bearer ${token}`, ...init.headers } });
  const key = await persist(() => dashboard("/v1/api-keys", { json: { name: "backend" } }));
  if (key.status !== 201) throw new Error(`api key: ${key.status} ${JSON.stringify(key.body)}`);
  const apiKey = key.body.key as string;
  const api = <T = any>(path: string, init: StackRequest = {}) => fetch<T>(path, { ...init, headers: { "x-api-key": apiKey, ...init.headers } });
  const me = await persist(() => api("/v1/me"));
  // The sandbox pool of a new tenant holds 100,000 USDC: enough for every load below.
  for (const url of urls) await persist(() => dashboard("/v1/webhooks", { json: { url, events: ["*"] } }));
  const endpoints = (await persist(() => dashboard("/v1/webhooks?limit=100"))).body.data as { id: string; url: string }[];
  const seen = new Set<string>();
  for (const e of endpoints) {
    if (seen.has(e.url)) await persist(() => dashboard(`/v1/webhooks/${e.id}`, { method: "DELETE" }));
    seen.add(e.url);
  }
  if (seen.size !== urls.length) throw new Error(`webhooks: ${seen.size} of ${urls.length} created`);
  return { tenantId: me.body.tenant.id as string, api, dashboard, loanProductId: me.body.merchantConfigs[0].loanProductId as string };
}

/** Retries a request through network errors and 5xx (the stack restarting, injected faults) until `deadline`. */
export async function persist<T = any>(call: () => Promise<StackResponse<T>>, deadline = Date.now() + 120_000): Promise<StackResponse<T>> {
  let last = "";
  while (Date.now() < deadline) {
    try {
      const res = await call();
      if (res.status < 500) return res;
      last = `${res.status} ${JSON.stringify(res.body)}`;
    } catch (err) {
      last = String(err);
    }
    await Bun.sleep(100);
  }
  throw new Error(`gave up retrying: ${last}`);
}

export type PlannedLoan = { idempotencyKey: string; borrower: PrivateKeyAccount; principal: string };

/** `n` loans to create, each with its own idempotency key and borrower wallet. */
export const planLoans = (n: number, principal = "100.00"): PlannedLoan[] =>
  Array.from({ length: n }, () => ({ idempotencyKey: `chaos-${crypto.randomUUID()}`, borrower: privateKeyToAccount(generatePrivateKey()), principal }));

/**
 * Creates the planned loans from `clients` concurrent clients, each retrying
 * its loan with the same idempotency key until it is answered (201, or 200
 * for a replay). Returns the loan ids by idempotency key.
 */
export async function createLoans(m: Merchant, plan: PlannedLoan[], clients = 10, deadline?: number): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < plan.length) {
        const p = plan[next++]!;
        const res = await persist(
          () =>
            m.api("/v1/loans", {
              json: {
                loanProductId: m.loanProductId,
                borrowerRef: p.borrower.address,
                borrowerWalletAddress: p.borrower.address,
                chain: "POLYGON_AMOY",
                principalAmount: p.principal,
                idempotencyKey: p.idempotencyKey,
                tenureDays: 7,
              },
            }),
          deadline,
        );
        if (res.status !== 201 && res.status !== 200) throw new Error(`create loan: ${res.status} ${JSON.stringify(res.body)}`);
        ids.set(p.idempotencyKey, res.body.id);
      }
    }),
  );
  return ids;
}

const POLYGON = CHAIN_CONFIG.POLYGON_AMOY;

export { signAsBorrower };

/**
 * Repays an ACTIVE loan in full as its borrower would: the API's repayment
 * instructions (approve, then the pool's repay), signed by the borrower's
 * wallet and submitted to the simulated chain. A resubmitted transaction is
 * the same transaction (same hash), so retries through faults are safe.
 */
export async function repayLoan(m: Merchant, loanId: string, borrower: PrivateKeyAccount, deadline?: number) {
  const loan = (await persist(() => m.api(`/v1/loans/${loanId}`), deadline)).body;
  await persist(() => m.api("/v1/sandbox/chain/faucet", { json: { chain: "POLYGON_AMOY", address: borrower.address, amount: "5.00" } }), deadline);
  const instructions = await persist(() => m.api(`/v1/loans/${loan.id}/repay`, { method: "POST" }), deadline);
  if (instructions.status !== 200) throw new Error(`repay instructions: ${instructions.status} ${JSON.stringify(instructions.body)}`);
  for (const [nonce, tx] of (instructions.body.transactions as { to: string; data: string }[]).entries()) {
    const signed = await signAsBorrower(borrower, POLYGON.chainId!, nonce, tx);
    const res = await persist(() => m.api("/v1/sandbox/chain/transactions", { json: { chain: "POLYGON_AMOY", signedTransaction: signed } }), deadline);
    // A retry of a transaction the chain already took is refused for its nonce: it went through.
    if (res.status !== 200 && !/nonce/i.test(JSON.stringify(res.body))) throw new Error(`repay tx: ${res.status} ${JSON.stringify(res.body)}`);
  }
}
