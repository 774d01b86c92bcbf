import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { custom, erc20Abi, type Hash, type Hex, http } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { TransferRequest } from "../../chain-port.ts";
import type { LiveChainSettings } from "../../live/live-config.ts";
import type { SignerSource } from "../../live/signer-source.ts";
import { type AnvilNode, broadcastTransaction, deployRehearsalContracts, mintUsdc, type RehearsalDeployment, startAnvil } from "../testing/anvil.ts";
import { evmLivePort, type EvmLivePortOptions } from "./evm-live-port.ts";
import { memoryEvmSenders } from "./memory-evm-senders.ts";

/**
 * The live EVM adapter against Anvil as BASE (chain id 8453): nonces,
 * refused broadcasts, fee-bumped replacement, confirmations, balances.
 * The whole funding flow through the api is in workers/api/live-evm-funding.test.ts.
 */

let node: AnvilNode;
let deployment: RehearsalDeployment;
beforeAll(async () => {
  node = await startAnvil({ chainId: 8453 });
  deployment = await deployRehearsalContracts(node);
}, 60_000);
afterAll(() => node?.stop());

const USDC = (n: number) => BigInt(n) * 1_000_000n;
const ETH = 10n ** 18n;
const TENANT = "tenant-1";

const settings = (): LiveChainSettings => ({
  chain: "BASE",
  rpcUrl: node.rpcUrl,
  apiKey: null,
  tokenAddress: deployment.usdc,
  poolAddress: deployment.pool,
  confirmations: 2,
  startBlock: 0,
});

/** A fresh DISBURSEMENT wallet holding `usdc` and `native`, with its key in a signer source. */
async function wallet(usdc = USDC(1_000), native = ETH) {
  const key = generatePrivateKey();
  const account = privateKeyToAccount(key);
  await node.test.setBalance({ address: account.address, value: native });
  if (usdc > 0n) await mintUsdc(node, deployment, account.address, usdc);
  const signers: SignerSource = {
    privateKey: async ({ tenantId, chain, address }) =>
      tenantId === TENANT && chain === "BASE" && address.toLowerCase() === account.address.toLowerCase() ? key : null,
  };
  return { key, account, signers };
}

/** A transport over Anvil whose `eth_sendRawTransaction` runs `intercept` first (to refuse or hold a broadcast). */
function interceptedTransport(intercept: (raw: Hex) => Promise<void>) {
  return custom({
    async request({ method, params }) {
      if (method === "eth_sendRawTransaction") await intercept((params as [Hex])[0]);
      return node.public.request({ method, params } as never);
    },
  });
}

const refusal = () => Object.assign(new Error("txpool is full"), { code: -32000 });

/** A transport whose first broadcast waits (`reached`) until `refuse` is called (a second transfer takes the next nonce meanwhile), then is refused. */
function firstBroadcastHeld() {
  let release: (() => void) | null = null;
  let first = true;
  const transport = interceptedTransport(async () => {
    if (!first) return;
    first = false;
    await new Promise<void>((resolve) => {
      release = resolve;
    });
    throw refusal();
  });
  return {
    transport,
    reached: async () => {
      while (!release) await Bun.sleep(5);
    },
    refuse: () => (release as unknown as () => void)(),
  };
}

let refs = 0;
const request = (from: string, overrides: Partial<TransferRequest> = {}): TransferRequest => ({
  chain: "BASE",
  asset: "USDC",
  from,
  to: privateKeyToAccount(generatePrivateKey()).address,
  amount: USDC(10),
  reference: `funding:test-${++refs}`,
  now: new Date(),
  tenantId: TENANT,
  ...overrides,
});

const tokenBalance = (address: string) =>
  node.public.readContract({ address: deployment.usdc, abi: erc20Abi, functionName: "balanceOf", args: [address as `0x${string}`] });
const nonceOf = async (hash: string) => (await broadcastTransaction(node, hash)).nonce;

function port(signers: SignerSource, options: Partial<EvmLivePortOptions> = {}) {
  return evmLivePort({ settings: settings(), signers, env: {}, senders: memoryEvmSenders(), ...options });
}

describe("live EVM transfer", () => {
  test("pending until two blocks deep, then success with the block and its time; the same reference never sends twice", async () => {
    const w = await wallet();
    const p = port(w.signers);
    const input = request(w.account.address);
    let first = await p.transfer(input);
    if (first.success !== "pending") throw new Error("expected pending");
    expect(first.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    // Anvil mines in the background (live-evm-funding.test.ts): asked again, the same transaction, until it is in a block.
    for (let i = 0; i < 100 && first.detail.startsWith("broadcast"); i++) {
      await Bun.sleep(20);
      const again = await p.transfer(input);
      if (again.success !== "pending") throw new Error("expected pending");
      expect(again.txHash).toBe(first.txHash);
      first = again;
    }
    expect(first.detail).toMatch(/^mined in block \d+, 0 of 2 confirmations$/);
    expect(await tokenBalance(input.to)).toBe(USDC(10));

    await node.test.mine({ blocks: 1 });
    expect(await p.transfer(input)).toMatchObject({ success: "pending", txHash: first.txHash });
    await node.test.mine({ blocks: 1 });
    const done = await p.transfer(input);
    const receipt = await node.public.getTransactionReceipt({ hash: first.txHash as Hash });
    const block = await node.public.getBlock({ blockNumber: receipt.blockNumber });
    expect(done).toEqual({
      success: true,
      txHash: first.txHash,
      blockNumber: Number(receipt.blockNumber),
      confirmedAt: new Date(Number(block.timestamp) * 1000),
    });
    // Asked again: the same answer, and still one transaction from the wallet.
    expect(await p.transfer(input)).toEqual(done);
    expect(await node.public.getTransactionCount({ address: w.account.address })).toBe(1);
    expect(await tokenBalance(input.to)).toBe(USDC(10));
  });

  test("no signer, a signer for another address, a wallet that cannot pay the max fee, a token balance too low: failures naming why, nothing broadcast", async () => {
    const w = await wallet();
    const other = await wallet();
    expect(await port({ privateKey: async () => null }).transfer(request(w.account.address))).toEqual({
      success: false,
      errorReason: `no signer is installed for ${w.account.address} on BASE: the platform operator installs it`,
      txHash: null,
    });
    const wrongKey: SignerSource = { privateKey: async () => other.key };
    const wrong = await port(wrongKey).transfer(request(w.account.address));
    expect(wrong).toEqual({ success: false, errorReason: `the signer installed for ${w.account.address} on BASE signs for another address`, txHash: null });
    expect(JSON.stringify(wrong)).not.toContain(other.key.slice(2));

    const poor = await wallet(USDC(1_000), 1_000n);
    const noGas = await port(poor.signers).transfer(request(poor.account.address));
    expect(noGas.success).toBe(false);
    if (noGas.success !== false) throw new Error("expected a failure");
    expect(noGas.errorReason).toMatch(
      new RegExp(
        `^the DISBURSEMENT wallet ${poor.account.address} on BASE cannot pay the transaction's max fee: it holds 1000 wei, the transfer may cost \\d+$`,
      ),
    );

    const empty = await wallet(0n);
    const noTokens = await port(empty.signers).transfer(request(empty.account.address));
    expect(noTokens).toMatchObject({ success: false, txHash: null });
    for (const a of [w, poor, empty]) expect(await node.public.getTransactionCount({ address: a.account.address, blockTag: "pending" })).toBe(0);
  });

  test("a broadcast the node refuses gives its nonce back: a transfer queued behind it is not stranded, the next transfer takes the freed nonce", async () => {
    const w = await wallet();
    const held = firstBroadcastHeld();
    const p = port(w.signers, { transport: held.transport });
    const refused = p.transfer(request(w.account.address));
    await held.reached();
    const behind = await p.transfer(request(w.account.address));
    expect(behind).toMatchObject({ success: "pending", detail: "broadcast with nonce 1, not mined yet" });
    held.refuse();
    const failed = await refused;
    expect(failed).toEqual({ success: false, errorReason: `the BASE node refused the transfer from ${w.account.address}: txpool is full`, txHash: null });

    // The freed nonce 0 goes to the next transfer; both it and the one queued behind it are mined.
    const next = await p.transfer(request(w.account.address));
    if (next.success !== "pending" || behind.success !== "pending") throw new Error("expected pending");
    expect(await nonceOf(next.txHash)).toBe(0);
    expect(await nonceOf(behind.txHash)).toBe(1);
    expect((await node.public.getTransactionReceipt({ hash: behind.txHash as Hash })).status).toBe("success");
    expect(await node.public.getTransactionCount({ address: w.account.address })).toBe(2);
  });

  test("a nonce given back by a refusal that no later claim takes is filled by a zero-value transaction to the wallet itself once the transfer behind it has waited replaceAfterMs: that one is mined, the stablecoin moves once (it waited for good when the refused loan was never sent from the wallet again)", async () => {
    const w = await wallet();
    const held = firstBroadcastHeld();
    const p = port(w.signers, { transport: held.transport, replaceAfterMs: 60_000 });
    const refusedInput = request(w.account.address);
    const refused = p.transfer(refusedInput);
    await held.reached();
    const behindInput = request(w.account.address);
    const behind = await p.transfer(behindInput);
    held.refuse();
    expect(await refused).toMatchObject({ success: false });
    if (behind.success !== "pending") throw new Error("expected pending");
    expect(await nonceOf(behind.txHash)).toBe(1);
    const start = Date.now();
    const at = (ms: number) => ({ ...behindInput, now: new Date(start + ms) });

    // Before replaceAfterMs it only waits: nothing else is sent.
    expect(await p.transfer(at(30_000))).toMatchObject({ success: "pending", detail: "broadcast with nonce 1, not mined yet" });
    expect(await node.public.getTransactionCount({ address: w.account.address, blockTag: "pending" })).toBe(0);

    const filled = await p.transfer(at(61_000));
    expect(filled).toMatchObject({ success: "pending", txHash: behind.txHash });
    if (filled.success !== "pending") throw new Error("expected pending");
    const fillerHash = filled.detail.match(/zero-value transaction (0x[0-9a-f]{64})/)?.[1];
    expect(filled.detail).toContain("waiting for nonce 0, filled by the zero-value transaction");
    const filler = await broadcastTransaction(node, fillerHash!);
    expect(filler).toMatchObject({ nonce: 0, value: 0n, input: "0x" });
    expect(filler.from.toLowerCase()).toBe(w.account.address.toLowerCase());
    expect(filler.to?.toLowerCase()).toBe(w.account.address.toLowerCase());
    // A later follow sends no second filler: the same one stands.
    expect(await p.transfer(at(62_000))).toMatchObject({ success: "pending" });
    expect(await node.public.getTransactionCount({ address: w.account.address, blockTag: "pending" })).toBe(2);

    await node.test.mine({ blocks: 3 });
    expect(await p.transfer(at(63_000))).toMatchObject({ success: true, txHash: behind.txHash });
    expect(await tokenBalance(behindInput.to)).toBe(USDC(10));
    expect(await tokenBalance(w.account.address)).toBe(USDC(990));
    // The refused transfer, sent again later, takes a new nonce and pays once.
    const again = await p.transfer({ ...refusedInput, now: new Date(start + 64_000) });
    if (again.success !== "pending") throw new Error("expected pending");
    expect(await nonceOf(again.txHash)).toBe(2);
    await node.test.mine({ blocks: 3 });
    expect(await p.transfer({ ...refusedInput, now: new Date(start + 65_000) })).toMatchObject({ success: true });
    expect(await tokenBalance(refusedInput.to)).toBe(USDC(10));
    expect(await tokenBalance(w.account.address)).toBe(USDC(980));
  });

  test("a broadcast the node took whose answer was lost, answered 'nonce too low' when sent again (viem retries a timed-out broadcast): kept and judged by its receipt, confirmed once, never sent again (it was given up and the loan paid twice)", async () => {
    const w = await wallet();
    let first = true;
    const transport = custom({
      async request({ method, params }) {
        const answer = await node.public.request({ method, params } as never);
        if (method === "eth_sendRawTransaction" && first) {
          first = false;
          throw Object.assign(new Error("nonce too low: next nonce 1, tx nonce 0"), { code: -32003 });
        }
        return answer;
      },
    });
    const p = port(w.signers, { transport });
    const input = request(w.account.address);
    const sent = await p.transfer(input);
    // Kept, not failed: pending ("mined in block …", or "not mined yet" when Anvil's automine has not sealed it this instant).
    expect(sent).toMatchObject({ success: "pending", txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    await node.test.mine({ blocks: 2 });
    const done = await p.transfer({ ...input, now: new Date() });
    expect(done).toMatchObject({ success: true, txHash: (sent as { txHash: string }).txHash });
    expect(await p.transfer({ ...input, now: new Date() })).toMatchObject({ success: true });
    expect(await tokenBalance(input.to)).toBe(input.amount);
    expect(await node.public.getTransactionCount({ address: w.account.address })).toBe(1);
  });

  test("a mined transfer whose receipt one node behind the RPC's balancer does not serve yet: still pending, never 'nonce used by another' at the head, nor on one sighting deep (it was failed and the loan paid twice)", async () => {
    const w = await wallet();
    let hideReceipts = false;
    const transport = custom({
      async request({ method, params }) {
        if (method === "eth_getTransactionReceipt" && hideReceipts) return null;
        return node.public.request({ method, params } as never);
      },
    });
    const p = port(w.signers, { transport });
    const input = request(w.account.address);
    const sent = await p.transfer(input);
    expect(sent).toMatchObject({ success: "pending" });
    hideReceipts = true;
    await node.test.mine({ blocks: 1 });
    expect(await p.transfer({ ...input, now: new Date() })).toMatchObject({ success: "pending" });
    // Even deep, a receipt one backend lacks is not enough to give the attempt up: seen once, it is checked again later.
    await node.test.mine({ blocks: 3 });
    expect(await p.transfer({ ...input, now: new Date() })).toMatchObject({ success: "pending", detail: expect.stringContaining("checked again") });
    hideReceipts = false;
    await node.test.mine({ blocks: 2 });
    expect(await p.transfer({ ...input, now: new Date(Date.now() + 3_600_000) })).toMatchObject({
      success: true,
      txHash: (sent as { txHash: string }).txHash,
    });
    expect(await tokenBalance(input.to)).toBe(input.amount);
    expect(await node.public.getTransactionCount({ address: w.account.address })).toBe(1);
  });

  test("a transfer queued behind a nonce nobody sends is not replaced (higher fees cannot unstick it; 20 bumps took its tip 9× up); once the gap fills, it is mined as first signed", async () => {
    const w = await wallet();
    let first = true;
    const transport = interceptedTransport(async () => {
      if (!first) return;
      first = false;
      throw refusal();
    });
    const p = port(w.signers, { transport, replaceAfterMs: 1_000 });
    expect(await p.transfer(request(w.account.address))).toMatchObject({ success: false });
    // Nonce 0 was given back; a transfer signed meanwhile by another sender of the wallet took nonce 1 (simulated: a book that starts at 1).
    const behindInput = request(w.account.address);
    const gapped = port(w.signers, {
      replaceAfterMs: 1_000,
      transport: custom({
        async request({ method, params }) {
          if (method === "eth_getTransactionCount" && (params as unknown[])[1] === "pending") return "0x1";
          return node.public.request({ method, params } as never);
        },
      }),
    });
    const behind = await gapped.transfer(behindInput);
    if (behind.success !== "pending") throw new Error("expected pending");
    expect(await nonceOf(behind.txHash)).toBe(1);
    for (let i = 1; i <= 3; i++) {
      expect(await gapped.transfer({ ...behindInput, now: new Date(Date.now() + i * 60_000) })).toMatchObject({ success: "pending", txHash: behind.txHash });
    }
    // The gap fills: both are mined, the queued one as first signed.
    const filler = await p.transfer(request(w.account.address));
    if (filler.success !== "pending") throw new Error("expected pending");
    expect(await nonceOf(filler.txHash)).toBe(0);
    await node.test.mine({ blocks: 2 });
    expect(await gapped.transfer({ ...behindInput, now: new Date() })).toMatchObject({ success: true, txHash: behind.txHash });
  });

  test("a node that cannot serve past state (pruned): a transfer still succeeds once deep; only the 'nonce used by another' verdict waits (it was pending for good)", async () => {
    const w = await wallet();
    const transport = custom({
      async request({ method, params }) {
        const at = (params as unknown[] | undefined)?.[1];
        if (method === "eth_getTransactionCount" && typeof at === "string" && at.startsWith("0x")) {
          throw Object.assign(new Error("BlockOutOfRangeError: block height is 44 but requested was 42"), { code: -32602 });
        }
        return node.public.request({ method, params } as never);
      },
    });
    const p = port(w.signers, { transport });
    const input = request(w.account.address);
    const sent = await p.transfer(input);
    expect(sent).toMatchObject({ success: "pending" });
    await node.test.mine({ blocks: 2 });
    expect(await p.transfer({ ...input, now: new Date() })).toMatchObject({ success: true, txHash: (sent as { txHash: string }).txHash });
    expect(await tokenBalance(input.to)).toBe(input.amount);
  });

  test("another transaction of the wallet takes the nonce the node answered 'nonce too low' for: pending until that one is deep, then a failure, and the next attempt pays once", async () => {
    const w = await wallet();
    let refuse = true;
    const transport = custom({
      async request({ method, params }) {
        if (method === "eth_sendRawTransaction" && refuse) {
          refuse = false;
          // Someone else holding the key sends from the wallet first, with the same nonce.
          await node.wallet(w.account).sendTransaction({ account: w.account, chain: null, to: w.account.address, value: 0n, nonce: 0 });
          throw Object.assign(new Error("nonce too low: next nonce 1, tx nonce 0"), { code: -32003 });
        }
        return node.public.request({ method, params } as never);
      },
    });
    const p = port(w.signers, { transport, replaceAfterMs: 60_000 });
    const input = request(w.account.address);
    expect(await p.transfer(input)).toMatchObject({ success: "pending" });
    await node.test.mine({ blocks: 2 });
    // Seen once: pending, checked again; seen again a replacement interval later: the attempt ends.
    const seen = new Date();
    expect(await p.transfer({ ...input, now: seen })).toMatchObject({ success: "pending", detail: expect.stringContaining("checked again") });
    expect(await p.transfer({ ...input, now: new Date(seen.getTime() + 30_000) })).toMatchObject({ success: "pending" });
    expect(await p.transfer({ ...input, now: new Date(seen.getTime() + 60_000) })).toMatchObject({
      success: false,
      errorReason: expect.stringContaining("used by another transaction"),
    });
    const again = await p.transfer({ ...input, now: new Date(seen.getTime() + 60_000) });
    if (again.success !== "pending") throw new Error(`expected pending, got ${JSON.stringify(again)}`);
    expect(await nonceOf(again.txHash)).toBe(1);
    await node.test.mine({ blocks: 2 });
    expect(await p.transfer({ ...input, now: new Date() })).toMatchObject({ success: true, txHash: again.txHash });
    expect(await tokenBalance(input.to)).toBe(input.amount);
  });

  test("three transfers of one wallet stuck in the pool together are each replaced in the same round (only the lowest was, one a minute)", async () => {
    const w = await wallet();
    const p = port(w.signers, { replaceAfterMs: 1_000 });
    const inputs = [request(w.account.address), request(w.account.address), request(w.account.address)];
    await node.test.setAutomine(false);
    try {
      const sent = await Promise.all(inputs.map((input) => p.transfer(input)));
      const later = new Date(Date.now() + 5_000);
      const replaced = [];
      for (const input of inputs) replaced.push(await p.transfer({ ...input, now: later }));
      for (const [i, r] of replaced.entries()) {
        expect(r).toMatchObject({ success: "pending" });
        expect((r as { txHash: string }).txHash).not.toBe((sent[i] as { txHash: string }).txHash);
      }
      await node.test.mine({ blocks: 3 });
    } finally {
      await node.test.setAutomine(true);
    }
    for (const input of inputs) expect(await p.transfer({ ...input, now: new Date(Date.now() + 10_000) })).toMatchObject({ success: true });
    expect(await node.public.getTransactionCount({ address: w.account.address })).toBe(3);
  });

  test("a transaction not mined in time is replaced with the same nonce and fees 12.5% higher; only one of them is mined", async () => {
    const w = await wallet();
    const p = port(w.signers, { replaceAfterMs: 1_000 });
    const input = request(w.account.address);
    let replaced: Awaited<ReturnType<typeof p.transfer>>;
    await node.test.setAutomine(false);
    try {
      const sent = await p.transfer(input);
      if (sent.success !== "pending") throw new Error("expected pending");
      expect(sent.detail).toBe("broadcast with nonce 0, not mined yet");
      const stuck = await node.public.getTransaction({ hash: sent.txHash as Hash });
      // Not yet stuck: asked again, the same transaction.
      expect(await p.transfer({ ...input, now: new Date() })).toMatchObject({ success: "pending", txHash: sent.txHash });

      replaced = await p.transfer({ ...input, now: new Date(Date.now() + 1_000) });
      if (replaced.success !== "pending") throw new Error("expected pending");
      expect(replaced.txHash).not.toBe(sent.txHash);
      const replacement = await node.public.getTransaction({ hash: replaced.txHash as Hash });
      expect(replacement.nonce).toBe(stuck.nonce);
      expect(replacement.maxFeePerGas! * 1000n).toBeGreaterThanOrEqual(stuck.maxFeePerGas! * 1125n);
      expect(replacement.maxPriorityFeePerGas! * 1000n).toBeGreaterThanOrEqual(stuck.maxPriorityFeePerGas! * 1125n);
      // The node holds the replacement only.
      expect(await node.public.getTransaction({ hash: sent.txHash as Hash }).catch(() => null)).toBeNull();
      await node.test.mine({ blocks: 3 });
    } finally {
      await node.test.setAutomine(true);
    }
    const done = await p.transfer({ ...input, now: new Date(Date.now() + 5_000) });
    expect(done).toMatchObject({ success: true, txHash: replaced.txHash });
    expect(await tokenBalance(input.to)).toBe(input.amount);
    expect(await node.public.getTransactionCount({ address: w.account.address })).toBe(1);
  });

  test("a transaction the node dropped is sent again, unchanged", async () => {
    const w = await wallet();
    const p = port(w.signers);
    const input = request(w.account.address);
    await node.test.setAutomine(false);
    try {
      const sent = await p.transfer(input);
      if (sent.success !== "pending") throw new Error("expected pending");
      await node.test.dropTransaction({ hash: sent.txHash as Hash });
      expect(await node.public.getTransaction({ hash: sent.txHash as Hash }).catch(() => null)).toBeNull();
      expect(await p.transfer(input)).toMatchObject({ success: "pending", txHash: sent.txHash });
      expect((await node.public.getTransaction({ hash: sent.txHash as Hash })).nonce).toBe(0);
    } finally {
      await node.test.setAutomine(true);
    }
  });

  test("twenty transfers at once from one wallet: nonces 0 to 19, all mined", async () => {
    const w = await wallet();
    const p = port(w.signers);
    const results = await Promise.all(Array.from({ length: 20 }, () => p.transfer(request(w.account.address))));
    const nonces = await Promise.all(results.map((r) => (r.success === false ? -1 : nonceOf(r.txHash))));
    expect(nonces.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    // Broadcast at once, they reach Anvil out of nonce order: one that arrives ahead of a gap waits in the
    // pool, and automine may leave it there once the gap fills (seen in CI: 2 of 20 mined at that instant).
    // One more block takes every transaction that is ready; all 20 are, or the count below falls short.
    await node.test.mine({ blocks: 1 });
    expect(await node.public.getTransactionCount({ address: w.account.address })).toBe(20);
  });
});

describe("live EVM balances and wiring", () => {
  test("balances: the token's balanceOf and the native balance; another chain is null; an RPC down throws", async () => {
    const w = await wallet(USDC(42), 7n * ETH);
    const p = port(w.signers);
    expect(await p.balances!("BASE", w.account.address)).toEqual({ stablecoin: USDC(42), native: 7n * ETH });
    expect(await p.balances!("POLYGON", w.account.address)).toBeNull();
    const down = evmLivePort({ settings: { ...settings(), rpcUrl: "http://127.0.0.1:1" }, signers: w.signers, env: {}, senders: memoryEvmSenders() });
    await expect(down.balances!("BASE", w.account.address)).rejects.toThrow();
  });

  test("an RPC of another chain is refused before anything is signed or read", async () => {
    const w = await wallet();
    const polygon = evmLivePort({ settings: { ...settings(), chain: "POLYGON" }, signers: w.signers, env: {}, senders: memoryEvmSenders() });
    await expect(polygon.balances!("POLYGON", w.account.address)).rejects.toThrow("the RPC for POLYGON reports chain id 8453, not 137");
    const sent = await polygon.transfer(request(w.account.address, { chain: "POLYGON" }));
    expect(sent).toMatchObject({ success: false, errorReason: expect.stringContaining("chain id 8453, not 137") });
  });

  test("without the EVM_SENDERS binding and no senders given, a transfer fails saying so; reading transactions is not this adapter's", async () => {
    const w = await wallet();
    const p = evmLivePort({ settings: settings(), signers: w.signers, env: {}, transport: http(node.rpcUrl) });
    expect(await p.transfer(request(w.account.address))).toEqual({
      success: false,
      errorReason: "live BASE funding needs the EVM_SENDERS binding (EvmSenderObject), which this worker lacks",
      txHash: null,
    });
    await expect(p.readTransactions("BASE", 0, 10)).rejects.toThrow(RangeError);
  });
});
