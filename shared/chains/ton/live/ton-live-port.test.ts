import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Address, toNano } from "@ton/core";
import { Blockchain, type SandboxContract, type TreasuryContract } from "@ton/sandbox";
import { eq } from "drizzle-orm";
import { tonTransfers } from "../../../../db/schema/ton.ts";
import { createTestApp, type TestApp } from "../../../testing/harness.ts";
import { sandboxTenant } from "../../../testing/loan-fixtures.ts";
import type { LiveChainSettings } from "../../live/live-config.ts";
import type { SignerSource } from "../../live/signer-source.ts";
import { jettonBalance, jettonWalletOf } from "../jetton-reads.ts";
import { deployJetton, type TestJetton } from "../testing/jetton-contracts.ts";
import { type SandboxNetwork, sandboxNetwork } from "../testing/sandbox-network.ts";
import type { TonNetwork } from "../ton-network.ts";
import { testV5Wallet, type TestV5Wallet } from "../testing/test-ton-wallet.ts";
import { MESSAGE_TTL_SECONDS, tonLivePort } from "./ton-live-port.ts";

/**
 * The live TON adapter against @ton/sandbox (the emulator running the real
 * wallet v5r1 and the TEP-74 reference jetton): funding jetton transfers,
 * idempotent by reference, pending until the recipient's jetton wallet has
 * the jettons, bounces as failures, balances.
 */

const USDT = (n: number) => BigInt(n) * 1_000_000n;
let t: TestApp;
let blockchain: Blockchain;
let network: SandboxNetwork;
let admin: SandboxContract<TreasuryContract>;
let usdt: TestJetton;
let tenantId: string;
let clockOffset = 0;
const keys = new Map<string, string>();
const signers: SignerSource = { privateKey: async ({ address }) => keys.get(address) ?? null };
let port: ReturnType<typeof tonLivePort>;
/** The adapter over the emulator with some of its network replaced (short pages, a hook inside a read). */
let portOver: (over: Partial<TonNetwork>) => ReturnType<typeof tonLivePort>;

beforeAll(async () => {
  t = await createTestApp();
  tenantId = (await sandboxTenant(t, "Ton Port Ltd")).tenantId;
  blockchain = await Blockchain.create();
  network = sandboxNetwork(blockchain);
  admin = await blockchain.treasury("admin");
  usdt = await deployJetton(blockchain, admin, "USDT");
  const settings: LiveChainSettings = {
    chain: "TON",
    rpcUrl: "sandbox",
    apiKey: null,
    tokenAddress: usdt.master.toRawString(),
    poolAddress: null,
    confirmations: 1,
    startBlock: 0,
  };
  port = tonLivePort({ settings, signers, env: {}, db: t.db, network, chainNow: () => Math.floor(Date.now() / 1000) + clockOffset });
  portOver = (over) =>
    tonLivePort({ settings, signers, env: {}, db: t.db, network: { ...network, ...over }, chainNow: () => Math.floor(Date.now() / 1000) + clockOffset });
});
afterAll(() => t.close());

/** A disbursement wallet holding `usdt` jettons and `ton` nanoton, with its signer installed (left undeployed: the first transfer deploys it). */
async function disbursement(jettons: bigint, ton = toNano("1")): Promise<TestV5Wallet> {
  const wallet = testV5Wallet(blockchain);
  keys.set(wallet.raw, wallet.seedHex);
  await admin.send({ to: wallet.address, value: ton, bounce: false });
  if (jettons > 0n) await usdt.mint(wallet.address, jettons);
  return wallet;
}

const balanceOf = async (owner: Address) => jettonBalance(network, await jettonWalletOf(network, usdt.master, owner));

/** Anyone floods `target` with `n` tiny internal messages from one v5r1 wallet (at most 250 an external). */
async function flood(target: Address, n: number) {
  const sender = testV5Wallet(blockchain);
  await admin.send({ to: sender.address, value: toNano("20"), bounce: false });
  for (let left = n; left > 0; left -= 250) {
    await sender.send(Array.from({ length: Math.min(left, 250) }, () => ({ to: target, value: 1_000_000n, bounce: false })));
  }
}
/** Moves the adapter's clock and the emulator's by `seconds` from now (0: back to now). */
function travel(seconds: number) {
  clockOffset = seconds;
  blockchain.now = seconds === 0 ? undefined : Math.floor(Date.now() / 1000) + seconds;
}
const rowOf = async (reference: string) => (await t.db.select().from(tonTransfers).where(eq(tonTransfers.reference, reference)))[0]!;
let loans = 0;
const request = (from: TestV5Wallet, to: Address, amount: bigint) => ({
  chain: "TON" as const,
  asset: "USDT" as const,
  from: from.raw,
  to: to.toRawString(),
  amount,
  reference: `funding:00000000-0000-4000-8000-${String(++loans).padStart(12, "0")}`,
  now: new Date(),
  tenantId,
});

describe("live TON funding", () => {
  test("a jetton transfer from the v5r1 DISBURSEMENT wallet: the borrower's jetton balance rises by the amount; a repeat call sends nothing", async () => {
    const from = await disbursement(USDT(1_000));
    const borrower = await blockchain.treasury("borrower-1");
    const input = request(from, borrower.address, USDT(250));
    const sent = await port.transfer(input);
    expect(sent).toMatchObject({ success: true, txHash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(await balanceOf(borrower.address)).toBe(USDT(250));
    expect(await balanceOf(from.address)).toBe(USDT(750));
    expect(await port.balances!("TON", from.raw)).toEqual({ stablecoin: USDT(750), native: expect.any(BigInt) });

    const broadcasts = network.broadcasts.length;
    expect(await port.transfer(input)).toEqual(sent);
    expect(network.broadcasts.length).toBe(broadcasts);
    expect(await balanceOf(borrower.address)).toBe(USDT(250));
  });

  test("pending while in flight, success once delivered; one message in flight per wallet", async () => {
    const from = await disbursement(USDT(1_000));
    const borrower = await blockchain.treasury("borrower-2");
    network.hold();
    const input = request(from, borrower.address, USDT(100));
    const first = await port.transfer(input);
    expect(first).toMatchObject({ success: "pending" });
    expect(await port.transfer(input)).toMatchObject({ success: "pending" });
    // Another reference from the same wallet waits: the wallet's seqno is taken.
    const other = request(from, borrower.address, USDT(1));
    expect(await port.transfer(other)).toMatchObject({ success: false, errorReason: expect.stringContaining("another transfer in flight") });
    await network.deliver();
    expect(await port.transfer(input)).toMatchObject({ success: true });
    expect(await balanceOf(borrower.address)).toBe(USDT(100));
    // The wallet is free again.
    expect(await port.transfer(other)).toMatchObject({ success: true });
    expect(await balanceOf(borrower.address)).toBe(USDT(101));
  });

  test("one reference from two wallets (a loan released and reserved again from another wallet while a run of the old reservation still sent): the later call follows the message claimed first, money moves once", async () => {
    const first = await disbursement(USDT(1_000));
    const second = await disbursement(USDT(1_000));
    const borrower = await blockchain.treasury("borrower-two-wallets");
    network.hold();
    const input = request(first, borrower.address, USDT(100));
    expect(await port.transfer({ ...input, reservation: 1 })).toMatchObject({ success: "pending" });
    const broadcasts = network.broadcasts.length;
    const again = { ...input, from: second.raw, reservation: 2 };
    expect(await port.transfer(again)).toMatchObject({ success: "pending" });
    expect(network.broadcasts.length).toBe(broadcasts);
    await network.deliver();
    // The answer names the wallet that paid (the funding settlement records it), not the one asked for; asked again, the same.
    expect(await port.transfer(again)).toMatchObject({ success: true, from: first.raw });
    expect(await port.transfer(again)).toMatchObject({ success: true, from: first.raw });
    expect([await balanceOf(borrower.address), await balanceOf(first.address), await balanceOf(second.address)]).toEqual([USDT(100), USDT(900), USDT(1_000)]);
  });

  test("more than the wallet's jettons: its jetton wallet bounces the transfer, a failure, nothing moved; the reference can be tried again", async () => {
    const from = await disbursement(USDT(50));
    const borrower = await blockchain.treasury("borrower-3");
    const input = request(from, borrower.address, USDT(60));
    const sent = await port.transfer(input);
    expect(sent).toMatchObject({ success: false, errorReason: expect.stringContaining("bounced"), txHash: expect.any(String) });
    expect(await balanceOf(from.address)).toBe(USDT(50));
    expect(await balanceOf(borrower.address)).toBe(0n);
    // Topped up, the same reference is a new attempt.
    await usdt.mint(from.address, USDT(10));
    expect(await port.transfer(input)).toMatchObject({ success: true });
    expect(await balanceOf(borrower.address)).toBe(USDT(60));
  });

  test("too little TON for the attached amount and fees: failure before anything is signed or broadcast", async () => {
    const from = await disbursement(USDT(50), toNano("0.05"));
    const broadcasts = network.broadcasts.length;
    const sent = await port.transfer(request(from, admin.address, USDT(1)));
    expect(sent).toMatchObject({ success: false, txHash: null, errorReason: expect.stringContaining("nanoton") });
    expect(network.broadcasts.length).toBe(broadcasts);
  });

  test("no signer, or a signer of another wallet: failure, nothing broadcast, and the key is in no answer", async () => {
    const from = await disbursement(USDT(50));
    keys.delete(from.raw);
    expect(await port.transfer(request(from, admin.address, USDT(1)))).toMatchObject({ success: false, errorReason: expect.stringContaining("no signer") });
    const stranger = testV5Wallet(blockchain);
    keys.set(from.raw, stranger.seedHex);
    const answer = await port.transfer(request(from, admin.address, USDT(1)));
    expect(answer).toMatchObject({ success: false, errorReason: expect.stringContaining("does not control") });
    expect(JSON.stringify(answer)).not.toContain(stranger.seedHex);
  });

  test("a message that expired unseen is signed again with a fresh seqno; the old one can never land, so money moves once", async () => {
    const from = await disbursement(USDT(100));
    const borrower = await blockchain.treasury("borrower-4");
    network.hold();
    const input = request(from, borrower.address, USDT(10));
    expect(await port.transfer(input)).toMatchObject({ success: "pending" });
    const [before] = await t.db.select().from(tonTransfers).where(eq(tonTransfers.reference, input.reference));
    // The message is lost on the way; the chain's clock passes its validity.
    const [lost] = network.drop();
    clockOffset = MESSAGE_TTL_SECONDS + 120;
    blockchain.now = Math.floor(Date.now() / 1000) + clockOffset;
    const again = await port.transfer(input);
    expect(again).toMatchObject({ success: true });
    const [after] = await t.db.select().from(tonTransfers).where(eq(tonTransfers.reference, input.reference));
    expect(after!.messageHash).not.toBe(before!.messageHash);
    expect(after!.seqno).toBe(before!.seqno);
    expect(await balanceOf(borrower.address)).toBe(USDT(10));
    // Should the lost message surface now, the wallet refuses it (expired, its seqno used): nothing moves twice.
    await network.sendExternal(lost!);
    expect(await balanceOf(borrower.address)).toBe(USDT(10));
    expect(await port.transfer(input)).toEqual(again);
    blockchain.now = undefined;
    clockOffset = 0;
  });

  test("a funding buried under 210 later transactions of the wallet (anyone can send them) is not signed again after expiry: the wallet used its seqno, so it stays pending, and the next trace goes on from where that one stopped and confirms it; money moves once (an audit funded one loan twice)", async () => {
    const from = await disbursement(USDT(1_000), toNano("5"));
    const borrower = await blockchain.treasury("borrower-flooded");
    network.hold();
    const input = request(from, borrower.address, USDT(100));
    expect(await port.transfer(input)).toMatchObject({ success: "pending" });
    await network.deliver();
    expect(await balanceOf(borrower.address)).toBe(USDT(100));
    await flood(from.address, 210);
    travel(MESSAGE_TTL_SECONDS + 120);
    try {
      const again = await port.transfer(input);
      expect(again).toMatchObject({ success: "pending", detail: expect.stringContaining("not signed again") });
      expect(await balanceOf(borrower.address)).toBe(USDT(100));
      const row = await rowOf(input.reference);
      expect(row.status).toBe("SENT");
      expect(JSON.parse(row.trace!)).toMatchObject({ resumeAt: { lt: expect.any(String), hash: expect.any(String) } });
      expect(await port.transfer(input)).toMatchObject({ success: true });
      expect(await rowOf(input.reference)).toMatchObject({ status: "CONFIRMED" });
      expect(await balanceOf(borrower.address)).toBe(USDT(100));
    } finally {
      travel(0);
    }
  }, 120_000);

  test("a walk that read the wallet's newest transaction before the message expired proves nothing: the message landing behind it is not signed again (a resumed walk reaching the send would otherwise read as 'never landed')", async () => {
    const from = await disbursement(USDT(1_000), toNano("5"));
    const borrower = await blockchain.treasury("borrower-walk-before-expiry");
    const broadcastsBefore = network.broadcasts.length;
    network.hold();
    const input = request(from, borrower.address, USDT(100));
    expect(await port.transfer(input)).toMatchObject({ success: "pending" });
    await flood(from.address, 210);
    // The walk starts before expiry and stops 200 transactions back.
    expect(await port.transfer(input)).toMatchObject({ success: "pending" });
    expect(JSON.parse((await rowOf(input.reference)).trace!)).toMatchObject({ resumeAt: expect.anything(), walkFrom: expect.any(Number) });
    // The message lands above where the walk started, before it expires.
    await network.deliver();
    expect(await balanceOf(borrower.address)).toBe(USDT(100));
    travel(MESSAGE_TTL_SECONDS + 120);
    try {
      // The walk goes on down to the send without meeting it: not proof, and the seqno is used, so not signed again.
      expect(await port.transfer(input)).toMatchObject({ success: "pending", detail: expect.stringContaining("not signed again") });
      expect(await balanceOf(borrower.address)).toBe(USDT(100));
      expect((await rowOf(input.reference)).trace).toBeNull();
      // A new walk from the newest transaction finds it.
      expect(await port.transfer(input)).toMatchObject({ success: true });
      expect(await balanceOf(borrower.address)).toBe(USDT(100));
      expect(network.broadcasts.length - broadcastsBefore).toBe(1);
    } finally {
      travel(0);
    }
  }, 120_000);

  test("a receipt the borrower buries under 210 transactions of its jetton wallet: that trace stays pending but frees the wallet (the next loan's transfer goes out), and the next trace goes on from where it stopped and confirms it; never signed again (an audit left such a loan pending for good)", async () => {
    const from = await disbursement(USDT(1_000), toNano("5"));
    const borrower = await blockchain.treasury("borrower-buries-receipt");
    network.hold();
    const first = request(from, borrower.address, USDT(100));
    expect(await port.transfer(first)).toMatchObject({ success: "pending" });
    await network.deliver();
    await flood(await jettonWalletOf(network, usdt.master, borrower.address), 210);
    expect(await port.transfer(first)).toMatchObject({ success: "pending" });
    const row = await rowOf(first.reference);
    expect(row.status).toBe("TAKEN");
    expect(JSON.parse(row.trace!)).toMatchObject({ wallet: expect.anything(), sender: expect.anything(), resumeAt: expect.anything() });
    const other = await blockchain.treasury("next-borrower");
    expect(await port.transfer(request(from, other.address, USDT(5)))).toMatchObject({ success: true });
    expect(await balanceOf(other.address)).toBe(USDT(5));
    // Even once expired, never signed again: the next trace reads on down the borrower's jetton wallet and finds the receipt.
    travel(MESSAGE_TTL_SECONDS + 120);
    try {
      expect(await port.transfer(first)).toMatchObject({ success: true, from: from.raw });
      expect(await rowOf(first.reference)).toMatchObject({ status: "CONFIRMED", confirmedAt: expect.any(Date) });
      expect(await balanceOf(borrower.address)).toBe(USDT(100));
    } finally {
      travel(0);
    }
  }, 120_000);

  test("a TAKEN transfer is settled once a trace reads it: delivered, CONFIRMED (a TAKEN row that could not settle stayed TAKEN for good, and a bounce could never be tried again)", async () => {
    const short = portOver({ transactions: (a, o) => network.transactions(a, { ...o, limit: Math.min(o.limit, 3) }) });
    const from = await disbursement(USDT(100), toNano("5"));
    const borrower = await blockchain.treasury("borrower-taken-then-read");
    network.hold();
    const input = request(from, borrower.address, USDT(7));
    expect(await short.transfer(input)).toMatchObject({ success: "pending" });
    await network.deliver();
    await flood(await jettonWalletOf(network, usdt.master, borrower.address), 10);
    // Short pages cannot read the receipt under the 10 transactions: in flight, the wallet took it.
    expect(await short.transfer(input)).toMatchObject({ success: "pending" });
    expect((await rowOf(input.reference)).status).toBe("TAKEN");
    // Whole pages read it: delivered, and the row records it.
    expect(await port.transfer(input)).toMatchObject({ success: true });
    expect(await rowOf(input.reference)).toMatchObject({ status: "CONFIRMED", confirmedAt: expect.any(Date) });
    expect(await balanceOf(borrower.address)).toBe(USDT(7));
  }, 120_000);

  test("an RPC that answers short pages: a message that never landed (the wallet's seqno is still its own) is signed again after expiry, once; one that landed is found or left pending, never sent twice", async () => {
    const short = portOver({ transactions: (a, o) => network.transactions(a, { ...o, limit: Math.min(o.limit, 3) }) });
    const from = await disbursement(USDT(100), toNano("5"));
    const borrower = await blockchain.treasury("borrower-short-pages");
    try {
      network.hold();
      const landed = request(from, borrower.address, USDT(20));
      expect(await short.transfer(landed)).toMatchObject({ success: "pending" });
      await network.deliver();
      expect(await balanceOf(borrower.address)).toBe(USDT(20));
      await flood(from.address, 10);
      travel(MESSAGE_TTL_SECONDS + 120);
      // Landed, then buried beyond what short pages show: the seqno was used, so it is left pending, never sent twice.
      expect(await short.transfer(landed)).toMatchObject({ success: "pending", detail: expect.stringContaining("not signed again") });
      expect(await balanceOf(borrower.address)).toBe(USDT(20));
      // With the whole history readable, the same attempt is found delivered.
      expect(await port.transfer(landed)).toMatchObject({ success: true });

      network.hold();
      const lost = request(from, borrower.address, USDT(10));
      expect(await short.transfer(lost)).toMatchObject({ success: "pending" });
      network.drop();
      travel(2 * (MESSAGE_TTL_SECONDS + 120));
      // The wallet's seqno is still the lost message's: it never landed, so it is signed again, and lands.
      expect(await short.transfer(lost)).toMatchObject({ success: true });
      expect(await balanceOf(borrower.address)).toBe(USDT(30));
    } finally {
      blockchain.now = undefined;
      clockOffset = 0;
    }
  }, 120_000);

  test("an expired message that cannot be signed again (the signer was removed): a failure that frees the wallet, not a transfer stuck in flight", async () => {
    const from = await disbursement(USDT(100));
    const borrower = await blockchain.treasury("borrower-5");
    network.hold();
    const input = request(from, borrower.address, USDT(10));
    expect(await port.transfer(input)).toMatchObject({ success: "pending" });
    network.drop();
    const seed = keys.get(from.raw)!;
    keys.delete(from.raw);
    clockOffset = MESSAGE_TTL_SECONDS + 120;
    blockchain.now = Math.floor(Date.now() / 1000) + clockOffset;
    try {
      expect(await port.transfer(input)).toMatchObject({ success: false, errorReason: expect.stringContaining("no signer") });
      const [row] = await t.db.select().from(tonTransfers).where(eq(tonTransfers.reference, input.reference));
      expect(row!.status).toBe("FAILED");
      // With the signer back, the same reference is a new attempt, and the wallet is free for it.
      keys.set(from.raw, seed);
      expect(await port.transfer(input)).toMatchObject({ success: true });
      expect(await balanceOf(borrower.address)).toBe(USDT(10));
    } finally {
      blockchain.now = undefined;
      clockOffset = 0;
    }
  });
  test("two runs of one loan's funding while the wallet is busy with another loan's transfer: the run that waited never replaces the message the other claimed meanwhile; money moves once (the busy path re-signed over it)", async () => {
    const from = await disbursement(USDT(1_000), toNano("5"));
    const borrower = await blockchain.treasury("borrower-busy-race");
    network.hold();
    const other = request(from, borrower.address, USDT(1));
    expect(await port.transfer(other)).toMatchObject({ success: "pending" });
    const input = request(from, borrower.address, USDT(100));
    let fired = false;
    // Run 1 finds the wallet busy and follows the other transfer; inside that read, it lands, and run 2 claims and sends this loan's.
    const hooked = portOver({
      transactions: async (address, options) => {
        if (!fired) {
          fired = true;
          await network.deliver();
          network.hold();
          expect(await port.transfer(input)).toMatchObject({ success: "pending" });
          await network.deliver();
        }
        return network.transactions(address, options);
      },
    });
    await hooked.transfer(input);
    expect(await port.transfer(input)).toMatchObject({ success: true });
    expect(await balanceOf(borrower.address)).toBe(USDT(101));
  }, 120_000);

  test("each new attempt starts its trace afresh: a bounced attempt's progress, left on the row, is never read as the next attempt's (it recorded a delivered transfer FAILED, and the next attempt sent again)", async () => {
    const from = await disbursement(USDT(50), toNano("5"));
    const borrower = await blockchain.treasury("borrower-after-bounce");
    const input = request(from, borrower.address, USDT(60));
    network.hold();
    expect(await port.transfer(input)).toMatchObject({ success: "pending" });
    await network.deliver();
    // The bounce at the sender's jetton wallet is buried: the trace stops partway, its progress kept.
    await flood(await jettonWalletOf(network, usdt.master, from.address), 210);
    expect(await port.transfer(input)).toMatchObject({ success: "pending" });
    expect(JSON.parse((await rowOf(input.reference)).trace!)).toMatchObject({ wallet: expect.anything(), resumeAt: expect.anything() });
    expect(await port.transfer(input)).toMatchObject({ success: false, errorReason: expect.stringContaining("bounced") });
    // Jettons arrive; the next attempt is signed, and is in flight.
    await usdt.mint(from.address, USDT(100));
    network.hold();
    expect(await port.transfer(input)).toMatchObject({ success: "pending" });
    expect(await rowOf(input.reference)).toMatchObject({ status: "SENT", trace: null });
    await network.deliver();
    expect(await port.transfer(input)).toMatchObject({ success: true });
    expect(await port.transfer(input)).toMatchObject({ success: true });
    expect(await balanceOf(borrower.address)).toBe(USDT(60));
  }, 120_000);

  test("a lost message whose seqno the wallet's owner used elsewhere, the wallet then buried under 210 transactions: traces walk on after expiry until the history since the send is read in full, then sign it again, once", async () => {
    const from = await disbursement(USDT(1_000), toNano("5"));
    const borrower = await blockchain.treasury("borrower-lost-buried");
    const before = network.broadcasts.length;
    network.hold();
    const input = request(from, borrower.address, USDT(100));
    expect(await port.transfer(input)).toMatchObject({ success: "pending" });
    network.drop();
    await from.send([{ to: borrower.address, value: 1_000_000n, bounce: false }]);
    await flood(from.address, 210);
    travel(MESSAGE_TTL_SECONDS + 120);
    try {
      expect(await port.transfer(input)).toMatchObject({ success: "pending", detail: expect.stringContaining("not signed again") });
      expect(await balanceOf(borrower.address)).toBe(0n);
      expect(await port.transfer(input)).toMatchObject({ success: true });
      expect(await port.transfer(input)).toMatchObject({ success: true });
      expect(await balanceOf(borrower.address)).toBe(USDT(100));
      expect(network.broadcasts.length - before).toBe(2);
    } finally {
      travel(0);
    }
  }, 120_000);

  test("a stored trace that is not what the adapter writes (unreadable, or a waypoint without the time its walk began) reads as none: a fresh walk, never a crash or a proof (a waypoint without its start read as begun now, and signed a landed message again)", async () => {
    const from = await disbursement(USDT(1_000), toNano("5"));
    const borrower = await blockchain.treasury("borrower-bad-trace");
    network.hold();
    const input = request(from, borrower.address, USDT(100));
    expect(await port.transfer(input)).toMatchObject({ success: "pending" });
    await flood(from.address, 210);
    expect(await port.transfer(input)).toMatchObject({ success: "pending" });
    const saved = JSON.parse((await rowOf(input.reference)).trace!);
    const { walkFrom: _, ...withoutStart } = saved;
    await t.db
      .update(tonTransfers)
      .set({ trace: JSON.stringify(withoutStart) })
      .where(eq(tonTransfers.reference, input.reference));
    await network.deliver();
    travel(MESSAGE_TTL_SECONDS + 120);
    try {
      expect(await port.transfer(input)).toMatchObject({ success: true });
      await t.db.update(tonTransfers).set({ status: "TAKEN", trace: "{" }).where(eq(tonTransfers.reference, input.reference));
      expect(await port.transfer(input)).toMatchObject({ success: true });
      await t.db
        .update(tonTransfers)
        .set({ status: "TAKEN", trace: JSON.stringify({ wallet: { lt: "x", hash: "zz" } }) })
        .where(eq(tonTransfers.reference, input.reference));
      expect(await port.transfer(input)).toMatchObject({ success: true });
      expect(await balanceOf(borrower.address)).toBe(USDT(100));
    } finally {
      travel(0);
    }
  }, 120_000);
});
