import { describe, expect, test } from "bun:test";
import { memorySimStorage } from "../../simulated/sim-storage.ts";
import { EvmSenderBook } from "./evm-sender-book.ts";
import { replacementFees } from "./evm-fees.ts";
import type { EvmSignedTx } from "./evm-send-record.ts";

const book = () => new EvmSenderBook(memorySimStorage(), "POLYGON:0xabc");
const tx = (hash: string): EvmSignedTx => ({ hash, raw: "0x", gas: "1", maxFeePerGas: "1", maxPriorityFeePerGas: "1", sentAt: "2026-01-01T00:00:00.000Z" });
const nonceOf = async (b: EvmSenderBook, ref: string, pending = 0) => (await b.claim(ref, pending)).record!.nonce;

describe("the nonce book of one sender", () => {
  test("starts at the node's pending count; concurrent claims get consecutive nonces; a reference holds its nonce", async () => {
    const b = book();
    const nonces = await Promise.all(Array.from({ length: 10 }, (_, i) => nonceOf(b, `r${i}`, 5)));
    expect(nonces).toEqual([5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
    expect(await b.claim("r3", 5)).toMatchObject({ claimed: false, record: { nonce: 8 } });
    // Transactions sent from the wallet by someone else lift the next nonce.
    expect(await nonceOf(b, "r10", 20)).toBe(20);
  });

  test("a refused broadcast gives its nonce back: the last one lowers the next nonce, an earlier one is reused first", async () => {
    const b = book();
    for (const r of ["a", "b", "c"]) {
      await b.claim(r, 0);
      await b.addSigned(r, tx(`0x${r}`));
    }
    await b.release("c", "0xc", true);
    expect(await nonceOf(b, "d")).toBe(2);
    await b.release("a", "0xa", true);
    expect(await nonceOf(b, "e")).toBe(0);
    expect(await nonceOf(b, "f")).toBe(3);
    // A refused transfer is a new attempt next time, with a new nonce.
    expect(await b.claim("a", 0)).toMatchObject({ claimed: true, record: { nonce: 4, attempt: 2 } });
  });

  test("a released nonce the node has since seen used is never handed out; one the node says is used is skipped", async () => {
    const b = book();
    for (const r of ["a", "b", "c"]) {
      await b.claim(r, 0);
      await b.addSigned(r, tx(`0x${r}`));
    }
    await b.release("a", "0xa", true);
    expect(await nonceOf(b, "d", 1)).toBe(3);
    await b.release("d", "0xd-never-signed", false);
    expect(await nonceOf(b, "e", 1)).toBe(4);
  });

  test("a refused replacement keeps the reference's nonce and its earlier transaction", async () => {
    const b = book();
    await b.claim("a", 0);
    await b.addSigned("a", tx("0x1"));
    await b.addSigned("a", tx("0x2"));
    await b.release("a", "0x2", true);
    expect(await b.get("a")).toMatchObject({ nonce: 0, failed: null, txs: [{ hash: "0x1" }] });
    expect(await nonceOf(b, "b")).toBe(1);
  });

  test("a failed reference (reverted, or its nonce used by another transaction) is claimed again with a new nonce", async () => {
    const b = book();
    await b.claim("a", 0);
    await b.addSigned("a", tx("0x1"));
    expect(await b.fail("a", "reverted", 1)).toMatchObject({ failed: "reverted" });
    expect(await b.claim("a", 1)).toMatchObject({ claimed: true, record: { nonce: 1, attempt: 2, txs: [] } });
  });

  test("a run that judged an older attempt never fails the one in flight now (a stale run failed the next reservation's mined transfer, and the loan was sent again)", async () => {
    const b = book();
    await b.claim("a", 0, 1);
    await b.addSigned("a", tx("0x1"), 1);
    expect(await b.fail("a", "reverted", 1)).toMatchObject({ attempt: 1, failed: "reverted" });
    expect(await b.close("a", 1)).toBeNull();
    expect(await b.claim("a", 1, 2)).toMatchObject({ claimed: true, record: { nonce: 1, attempt: 2 } });
    await b.addSigned("a", tx("0x2"), 2);
    // The stale run read attempt 1's revert and fails late: attempt 2 stands.
    expect(await b.fail("a", "reverted", 1)).toMatchObject({ attempt: 2, failed: null, txs: [{ hash: "0x2" }] });
    expect(await b.get("a")).toMatchObject({ attempt: 2, failed: null });
  });

  test("two runs signing the same nonce with the same fees make the same bytes: one transaction, two copies, so one run's refusal leaves the other's (a node behind a balancer refused what another took: the loan was paid twice)", async () => {
    const b = book();
    await b.claim("a", 0);
    await b.addSigned("a", tx("0x1"));
    expect(await b.addSigned("a", tx("0x1"))).toMatchObject({ txs: [{ hash: "0x1", copies: 2 }] });
    await b.release("a", "0x1", true);
    expect(await b.get("a")).toMatchObject({ nonce: 0, failed: null, txs: [{ hash: "0x1", copies: 1 }] });
    // Both refused: the nonce goes back.
    await b.release("a", "0x1", true);
    expect(await b.get("a")).toMatchObject({ failed: "not broadcast", txs: [] });
    expect(await b.claim("a", 0)).toMatchObject({ claimed: true, record: { nonce: 0, attempt: 2 } });
  });

  test("the first sighting of a used nonce is kept (later ones do not move it), only for the attempt seen, and a new attempt starts without it", async () => {
    const b = book();
    await b.claim("a", 0);
    await b.addSigned("a", tx("0x1"));
    expect(await b.sawNonceUsed("a", 1, "2026-11-24T12:00:00.000Z")).toMatchObject({ nonceUsedSeenAt: "2026-11-24T12:00:00.000Z" });
    expect(await b.sawNonceUsed("a", 1, "2026-11-24T12:05:00.000Z")).toMatchObject({ nonceUsedSeenAt: "2026-11-24T12:00:00.000Z" });
    expect(await b.sawNonceUsed("a", 2, "2026-11-24T12:06:00.000Z")).toMatchObject({ attempt: 1, nonceUsedSeenAt: "2026-11-24T12:00:00.000Z" });
    await b.fail("a", "nonce used", 1);
    const again = await b.claim("a", 1);
    expect(again.record).not.toHaveProperty("nonceUsedSeenAt");
  });

  test("a caller from before `attempt` was passed (a deploy window) fails the current attempt as before", async () => {
    const b = book();
    await b.claim("a", 0);
    await b.addSigned("a", tx("0x1"));
    expect(await b.fail("a", "reverted")).toMatchObject({ failed: "reverted" });
  });

  test("a close shuts a reference to its reservation and every earlier one (and to calls naming none): nothing is claimed or signed for them; a later reservation claims again", async () => {
    const b = book();
    expect(await b.close("a", 1)).toBeNull();
    expect(await b.claim("a", 0, 1)).toEqual({ claimed: false, record: null });
    expect(await b.claim("a", 0)).toEqual({ claimed: false, record: null });
    expect(await b.close("a", 0)).toBeNull(); // an older close never lowers it
    expect(await b.claim("a", 0, 1)).toEqual({ claimed: false, record: null });
    expect(await b.claim("a", 0, 2)).toMatchObject({ claimed: true, record: { nonce: 0, reservation: 2 } });
    expect(await b.addSigned("a", tx("0x1"), 1)).toBeNull();
    expect(await b.addSigned("a", tx("0x1"), 2)).toMatchObject({ txs: [{ hash: "0x1" }] });
    // Other references are not touched.
    expect(await nonceOf(b, "b")).toBe(1);
  });

  test("a nonce claimed and not yet signed is voided by a close of its reservation and given back; its signature is refused", async () => {
    const b = book();
    expect(await b.claim("a", 0, 1)).toMatchObject({ claimed: true, record: { nonce: 0 } });
    expect(await b.close("a", 1)).toBeNull();
    expect(await b.get("a")).toMatchObject({ nonce: 0, failed: "closed before anything was signed" });
    expect(await b.addSigned("a", tx("0x1"), 1)).toBeNull();
    expect(await b.get("a")).toMatchObject({ txs: [] });
    expect(await nonceOf(b, "b")).toBe(0);
  });

  test("a close finds a transaction signed for the reference (it may still be mined): that record is the answer and nothing is closed", async () => {
    const b = book();
    await b.claim("a", 0, 1);
    await b.addSigned("a", tx("0x1"), 1);
    expect(await b.close("a", 1)).toMatchObject({ nonce: 0, txs: [{ hash: "0x1" }], failed: null });
    // Still open to its reservation: a replacement of the same nonce is recorded.
    expect(await b.addSigned("a", tx("0x2"), 1)).toMatchObject({ txs: [{ hash: "0x1" }, { hash: "0x2" }] });
    // Once its nonce is spent without moving money, a close shuts it.
    await b.fail("a", "reverted", 1);
    expect(await b.close("a", 1)).toBeNull();
    expect(await b.claim("a", 1, 1)).toEqual({ claimed: false, record: null });
  });

  test("a close under an earlier reservation leaves a later one's claim alone", async () => {
    const b = book();
    await b.claim("a", 0, 2);
    expect(await b.close("a", 1)).toBeNull();
    expect(await b.get("a")).toMatchObject({ reservation: 2, failed: null });
    expect(await b.addSigned("a", tx("0x1"), 2)).toMatchObject({ txs: [{ hash: "0x1" }] });
  });

  test("a gap is claimed only for a nonce the book gave back and no claim took since: once (its holder sends it again), never handed to a transfer meanwhile, and back in the book if the filler is refused", async () => {
    const b = book();
    for (const r of ["a", "b"]) {
      await b.claim(r, 0);
      await b.addSigned(r, tx(`0x${r}`));
    }
    // Nothing given back: no gap of the book's to fill (nonce 0 is a's, and a's own follow sends it).
    expect(await b.claimGap(0, 0)).toEqual({ claimed: false, record: null });
    await b.release("a", "0xa", true);
    // Below the node's pending count the nonce is used already.
    expect(await b.claimGap(0, 1)).toEqual({ claimed: false, record: null });
    expect(await b.claimGap(0, 0)).toMatchObject({ claimed: true, record: { reference: "gap:0", nonce: 0, attempt: 1, txs: [] } });
    expect(await b.claimGap(0, 0)).toMatchObject({ claimed: false, record: { reference: "gap:0", nonce: 0 } });
    // The filler holds nonce 0: the next transfer takes 2.
    expect(await nonceOf(b, "c")).toBe(2);
    await b.addSigned("gap:0", tx("0xf"));
    expect(await b.claimGap(0, 0)).toMatchObject({ claimed: false, record: { txs: [{ hash: "0xf" }] } });
    // Refused: nonce 0 is back for the next claim, a transfer's or a filler's.
    await b.release("gap:0", "0xf", true);
    expect(await b.claimGap(0, 0)).toMatchObject({ claimed: true, record: { nonce: 0, attempt: 2 } });
    expect(await nonceOf(b, "d")).toBe(3);
  });

  test("a storage marked for another sender is refused", async () => {
    const storage = memorySimStorage();
    await new EvmSenderBook(storage, "POLYGON:0xabc").claim("a", 0);
    await expect(new EvmSenderBook(storage, "BASE:0xabc").claim("b", 0)).rejects.toThrow("this ledger is POLYGON:0xabc, not BASE:0xabc");
  });
});

describe("replacement fees", () => {
  test("at least 12.5% over the stuck transaction on both fees (rounded up), or the chain's current fees if higher", () => {
    expect(replacementFees({ maxFeePerGas: 100n, maxPriorityFeePerGas: 8n }, { maxFeePerGas: 90n, maxPriorityFeePerGas: 1n })).toEqual({
      maxFeePerGas: 113n,
      maxPriorityFeePerGas: 9n,
    });
    expect(replacementFees({ maxFeePerGas: 100n, maxPriorityFeePerGas: 8n }, { maxFeePerGas: 300n, maxPriorityFeePerGas: 50n })).toEqual({
      maxFeePerGas: 300n,
      maxPriorityFeePerGas: 50n,
    });
  });
});
