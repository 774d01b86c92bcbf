import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Address, erc20Abi, getAddress, type Hash } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { type AnvilNode, deployRehearsalContracts, mintUsdc, type RehearsalDeployment, startAnvil } from "../../shared/chains/evm/testing/anvil.ts";
import { signUpMerchant, startTestStack, type TestStack } from "./integration.ts";

/**
 * Live POLYGON funding on workerd: the bundled api worker's loan objects
 * send through the live EVM adapter to Anvil (chain 137) with nonces kept
 * by the EvmSenderObject Durable Object, and the cron worker's retry
 * (which reaches the same objects) makes the loans ACTIVE once one block
 * deep.
 */
describe("live EVM funding on workerd", () => {
  let node: AnvilNode;
  let deployment: RehearsalDeployment;
  let stack: TestStack;
  beforeAll(async () => {
    node = await startAnvil({ chainId: 137 });
    deployment = await deployRehearsalContracts(node);
    stack = await startTestStack({
      vars: { POLYGON_RPC_URL: node.rpcUrl, POLYGON_TOKEN_ADDRESS: deployment.usdc, POLYGON_POOL_ADDRESS: deployment.pool, POLYGON_CONFIRMATIONS: "1" },
    });
  }, 180_000);
  afterAll(async () => {
    await stack?.dispose();
    await node?.stop();
  });

  test("three live loans at once from one DISBURSEMENT wallet: nonces 0 to 2, RESERVED until a block deep, then ACTIVE by the cron; the borrower holds the principal", async () => {
    const m = await signUpMerchant(stack, "Live EVM");
    const db = await stack.db();
    await db.prepare("UPDATE tenants SET certified_at = ?, mode = 'live' WHERE id = ?").bind(Date.now(), m.tenantId).run();
    const liveKey = (await m.dashboard("/v1/api-keys", { json: { name: "live backend", mode: "live" } })).body.key as string;
    const live = (path: string, json?: unknown, method?: string) => stack.fetch(path, { json, method, headers: { "x-api-key": liveKey } });
    expect(
      (await live("/v1/policies", { requireKycVerified: true, manualReviewAbove: null, maxOpenLoansPerBorrower: null, blockedWallets: [] }, "PUT")).status,
    ).toBe(200);

    const key = generatePrivateKey();
    const disbursement = privateKeyToAccount(key);
    await node.test.setBalance({ address: disbursement.address, value: 10n ** 19n });
    await mintUsdc(node, deployment, disbursement.address, 1_000_000_000n);
    const wallet = await m.dashboard("/v1/wallets", { json: { chain: "POLYGON", role: "DISBURSEMENT", address: disbursement.address } });
    expect(wallet.status).toBe(201);
    const challenge = await m.dashboard(`/v1/wallets/${wallet.body.id}/challenge`, { method: "POST" });
    const signature = await disbursement.signMessage({ message: challenge.body.message });
    expect((await m.dashboard(`/v1/wallets/${wallet.body.id}/verify`, { json: { challengeId: challenge.body.id, signature } })).status).toBe(200);
    const signer = { chain: "POLYGON", address: disbursement.address, privateKey: key };
    const installed = await stack.fetch(`/v1/operator/tenants/${m.tenantId}/signers`, { json: signer, headers: { "x-operator-key": "svc_operator_dev" } });
    expect(installed.status).toBe(201);
    // The wallet's balances are read from Anvil through the adapter.
    expect((await m.dashboard(`/v1/wallets/${wallet.body.id}`)).body).toMatchObject({ stablecoinBalance: "1000.00", nativeBalance: "10" });

    const loans = await Promise.all(
      [1, 2, 3].map(async (n) => {
        const ref = `workerd-live-${n}`;
        expect((await live(`/v1/borrowers/${ref}/kyc`, { status: "VERIFIED", merchantUserId: "compliance-1" }, "PATCH")).status).toBe(200);
        const body = {
          loanProductId: m.loanProductId,
          borrowerRef: ref,
          borrowerWalletAddress: privateKeyToAccount(generatePrivateKey()).address,
          chain: "POLYGON",
          principalAmount: "100.00",
          idempotencyKey: `workerd-live-${n}-${Date.now()}`,
        };
        const res = await live("/v1/loans", body);
        expect(res.status).toBe(201);
        return res.body as { id: string; fundingState: string; fundingTxHash: string; borrowerWalletAddress: Address };
      }),
    );
    expect(loans.every((l) => ["RESERVED", "FUNDED"].includes(l.fundingState) && /^0x[0-9a-f]{64}$/.test(l.fundingTxHash))).toBe(true);
    const nonces = await Promise.all(loans.map(async (l) => (await node.public.getTransaction({ hash: l.fundingTxHash as Hash })).nonce));
    expect(nonces.sort()).toEqual([0, 1, 2]);

    await node.test.mine({ blocks: 1 });
    expect((await stack.scheduled()).outcome).toBe("ok");
    for (const loan of loans) {
      const after = (await live(`/v1/loans/${loan.id}`)).body;
      expect(after).toMatchObject({ status: "ACTIVE", fundingState: "FUNDED", fundingTxHash: loan.fundingTxHash });
      const held = await node.public.readContract({ address: deployment.usdc, abi: erc20Abi, functionName: "balanceOf", args: [loan.borrowerWalletAddress] });
      expect(held).toBe(100_000_000n);
      const funded = await db.prepare("SELECT count(*) AS n FROM events WHERE type = 'loan.funded' AND loan_id = ?").bind(loan.id).first<{ n: number }>();
      expect(funded?.n).toBe(1);
    }
    expect(await node.public.getTransactionCount({ address: disbursement.address })).toBe(3);
  }, 120_000);

  test("a live loan funded on Anvil is repaid by the borrower signing the API's instructions: the cron's listener makes it REPAID, the COLLECTIONS wallet holds the total, the pool nothing", async () => {
    const m = await signUpMerchant(stack, "Live EVM repay");
    const db = await stack.db();
    await db.prepare("UPDATE tenants SET certified_at = ?, mode = 'live' WHERE id = ?").bind(Date.now(), m.tenantId).run();
    const liveKey = (await m.dashboard("/v1/api-keys", { json: { name: "live backend", mode: "live" } })).body.key as string;
    const live = (path: string, json?: unknown, method?: string) => stack.fetch(path, { json, method, headers: { "x-api-key": liveKey } });
    const policy = { requireKycVerified: true, manualReviewAbove: null, maxOpenLoansPerBorrower: null, blockedWallets: [] };
    expect((await live("/v1/policies", policy, "PUT")).status).toBe(200);
    const addVerified = async (role: string, account: ReturnType<typeof privateKeyToAccount>) => {
      const wallet = await m.dashboard("/v1/wallets", { json: { chain: "POLYGON", role, address: account.address } });
      expect(wallet.status).toBe(201);
      const challenge = await m.dashboard(`/v1/wallets/${wallet.body.id}/challenge`, { method: "POST" });
      const signature = await account.signMessage({ message: challenge.body.message });
      expect((await m.dashboard(`/v1/wallets/${wallet.body.id}/verify`, { json: { challengeId: challenge.body.id, signature } })).status).toBe(200);
    };
    const key = generatePrivateKey();
    const disbursement = privateKeyToAccount(key);
    await node.test.setBalance({ address: disbursement.address, value: 10n ** 19n });
    await mintUsdc(node, deployment, disbursement.address, 1_000_000_000n);
    await addVerified("DISBURSEMENT", disbursement);
    const signer = { chain: "POLYGON", address: disbursement.address, privateKey: key };
    expect((await stack.fetch(`/v1/operator/tenants/${m.tenantId}/signers`, { json: signer, headers: { "x-operator-key": "svc_operator_dev" } })).status).toBe(
      201,
    );
    const collections = privateKeyToAccount(generatePrivateKey());
    await addVerified("COLLECTIONS", collections);

    const borrower = privateKeyToAccount(generatePrivateKey());
    expect((await live("/v1/borrowers/workerd-repay/kyc", { status: "VERIFIED", merchantUserId: "compliance-1" }, "PATCH")).status).toBe(200);
    const created = await live("/v1/loans", {
      loanProductId: m.loanProductId,
      borrowerRef: "workerd-repay",
      borrowerWalletAddress: borrower.address,
      chain: "POLYGON",
      principalAmount: "100.00",
      idempotencyKey: `workerd-repay-${Date.now()}`,
    });
    expect(created.status).toBe(201);
    await node.test.mine({ blocks: 1 });
    expect((await stack.scheduled()).outcome).toBe("ok");
    const funded = (await live(`/v1/loans/${created.body.id}`)).body;
    expect(funded).toMatchObject({ status: "ACTIVE", mode: "live" });

    // The borrower pays the total: principal plus fee (more than the principal it holds), so it gets the rest first.
    const instructions = (await live(`/v1/loans/${funded.id}/repay`, undefined, "POST")).body;
    expect(instructions).toMatchObject({
      chain: "POLYGON",
      chainId: 137,
      spender: getAddress(deployment.pool),
      collections: collections.address,
      amount: funded.totalDue,
    });
    const total = BigInt(instructions.amountUnits);
    await mintUsdc(node, deployment, borrower.address, total - 100_000_000n);
    await node.test.setBalance({ address: borrower.address, value: 10n ** 18n });
    const client = node.wallet(borrower);
    for (const tx of instructions.transactions as { to: Address; data: `0x${string}` }[]) {
      const hash = await client.sendTransaction({ account: borrower, chain: client.chain, to: tx.to, data: tx.data, value: 0n });
      expect((await node.public.waitForTransactionReceipt({ hash, pollingInterval: 20 })).status).toBe("success");
    }
    await node.test.mine({ blocks: 1 });
    expect((await stack.scheduled()).outcome).toBe("ok");

    const repaid = (await live(`/v1/loans/${funded.id}`)).body;
    expect(repaid).toMatchObject({ status: "REPAID", amountDue: "0.00" });
    const balance = (address: Address) => node.public.readContract({ address: deployment.usdc, abi: erc20Abi, functionName: "balanceOf", args: [address] });
    expect(await balance(collections.address)).toBe(total);
    expect(await balance(deployment.pool)).toBe(0n);
    expect(await balance(borrower.address)).toBe(0n);
    const repaidEvents = await db.prepare("SELECT count(*) AS n FROM events WHERE type = 'loan.repaid' AND loan_id = ?").bind(funded.id).first<{ n: number }>();
    expect(repaidEvents?.n).toBe(1);
    // Another tick reads nothing new and credits nothing twice.
    expect((await stack.scheduled()).outcome).toBe("ok");
    expect((await live(`/v1/loans/${funded.id}`)).body.status).toBe("REPAID");
  }, 120_000);
});
