import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { CHAIN_CONFIG } from "../../shared/chains/chain-config.ts";
import { signAsBorrower } from "../../shared/testing/sign-as-borrower.ts";
import type { Chain } from "../../shared/domain/rails.ts";
import { formatAmount, parseAmount } from "../../shared/domain/money.ts";

/** One call to the api with the sandbox key: status and parsed body. */
export type ApiCall = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;

const UNITS = 6;

/** The borrower's account from its key, which must be the loan's wallet's. */
function borrowerAccount(privateKey: Hex | undefined, borrower: string, chain: Chain) {
  if (!privateKey) throw new Error(`an ${chain} loan is repaid by its borrower's signature: pass the private key of ${borrower}`);
  const account = privateKeyToAccount(privateKey);
  if (account.address.toLowerCase() !== borrower.toLowerCase()) throw new Error(`that key is ${account.address}'s, not the borrower's (${borrower})`);
  return account;
}

/**
 * Repays a sandbox loan in full as its borrower would (SPEC.md "Happy path":
 * created, approved, funded, repaid), through the sandbox helpers only:
 * the faucet gives the borrower what its balance lacks of the amount due
 * (the fee, any late fee: it received the principal), then
 * - EVM (POLYGON_AMOY, BASE_SEPOLIA): the borrower's key signs each
 *   transaction of `POST /v1/loans/:id/repay` (the approve, the pool's repay)
 *   from the nonce `GET /v1/sandbox/chain/accounts/:address` gives, and
 *   `POST /v1/sandbox/chain/transactions` sends it;
 * - TON_TESTNET, SOLANA_DEVNET: `POST /v1/sandbox/chain/transfers` sends the
 *   amount due to the instructions' address with their comment (memo).
 * Returns the loan as the api shows it afterwards (REPAID).
 */
export async function sandboxRepay(call: ApiCall, input: { loanId: string; privateKey?: Hex }) {
  const ok = async (method: string, path: string, body?: unknown) => {
    const res = await call(method, path, body);
    if (res.status !== 200 && res.status !== 201) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const loan = await ok("GET", `/v1/loans/${input.loanId}`);
  const chain = loan.chain as Chain;
  const evm = CHAIN_CONFIG[chain].family === "EVM";
  // Before anything is sent: an EVM loan is repaid only by its borrower's signature.
  const account = evm ? borrowerAccount(input.privateKey, loan.borrowerWalletAddress, chain) : null;
  const instructions = await ok("POST", `/v1/loans/${input.loanId}/repay`);
  const wallet = await ok("GET", `/v1/sandbox/chain/accounts/${encodeURIComponent(loan.borrowerWalletAddress)}?chain=${chain}`);
  const shortfall = parseAmount(String(instructions.amount), UNITS)! - parseAmount(wallet.balance, UNITS)!;
  if (shortfall > 0n) await ok("POST", "/v1/sandbox/chain/faucet", { chain, address: loan.borrowerWalletAddress, amount: formatAmount(shortfall, UNITS) });
  if (!account) {
    const sent = await ok("POST", "/v1/sandbox/chain/transfers", {
      chain,
      from: loan.borrowerWalletAddress,
      to: instructions.to,
      amount: instructions.amount,
      comment: instructions.comment ?? instructions.memo,
    });
    if (sent.status !== "success") throw new Error(`the transfer ${sent.status}: ${JSON.stringify(sent)}`);
    return ok("GET", `/v1/loans/${input.loanId}`);
  }
  let nonce = wallet.nonce as number;
  for (const tx of instructions.transactions as { to: Hex; data: Hex }[]) {
    const signedTransaction = await signAsBorrower(account, instructions.chainId, nonce++, tx);
    const sent = await ok("POST", "/v1/sandbox/chain/transactions", { chain, signedTransaction });
    if (sent.status !== "success") throw new Error(`the transaction ${sent.status}: ${JSON.stringify(sent)}`);
  }
  return ok("GET", `/v1/loans/${input.loanId}`);
}

if (import.meta.main) {
  const [loanId, privateKey] = process.argv.slice(2);
  const baseUrl = process.env.BASE_URL ?? "http://127.0.0.1:8787";
  const apiKey = process.env.API_KEY;
  if (!loanId || !apiKey || (privateKey !== undefined && !/^0x[0-9a-fA-F]{64}$/.test(privateKey))) {
    console.error("usage: API_KEY=svc_test_… [BASE_URL=http://127.0.0.1:8787] npm run sandbox:repay -- <loanId> [<borrower's 0x private key> (EVM chains)]");
    process.exit(2);
  }
  const call: ApiCall = async (method, path, body) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { "x-api-key": apiKey, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
  const loan = await sandboxRepay(call, { loanId, privateKey: privateKey as Hex | undefined });
  console.log(`loan ${loan.id}: ${loan.status}, paid ${loan.amountPaid}, due ${loan.amountDue}`);
}
