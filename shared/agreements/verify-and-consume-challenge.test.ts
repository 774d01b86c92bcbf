import { describe, expect, test } from "bun:test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { DomainError } from "../domain/errors.ts";
import { memoryChallengeStore, type AgreementChallenge } from "./challenge-store.ts";
import { verifyAndConsumeChallenge } from "./verify-and-consume-challenge.ts";

const now = new Date("2026-03-01T12:00:00Z");
const account = privateKeyToAccount(generatePrivateKey());

async function issued() {
  const store = memoryChallengeStore();
  const challenge: AgreementChallenge = {
    id: crypto.randomUUID(),
    tenantId: "t1",
    loanId: "l1",
    programId: null,
    walletAddress: account.address,
    amount: "100.00",
    tenureDays: 7,
    chain: "POLYGON_AMOY",
    stablecoin: "USDC",
    message: "svc credit loan agreement\nChallenge: c1",
    expiresAt: now.getTime() + 300_000,
    consumedAt: null,
  };
  await store.issue(challenge);
  const use = async (walletSignature: string, at = now) =>
    verifyAndConsumeChallenge(store, {}, { challenge: (await store.get(challenge.id))!, walletSignature, allowedDomains: [], now: at, realNow: at });
  return { store, challenge, use, good: await account.signMessage({ message: challenge.message }) };
}

const messageOf = async (p: Promise<unknown>) =>
  (
    (await p.then(
      () => null,
      (e) => e,
    )) as DomainError
  ).detail;

describe("verifyAndConsumeChallenge", () => {
  test("a bad signature consumes nothing; the good one consumes it and returns it used", async () => {
    const { store, challenge, use, good } = await issued();
    const bad = await privateKeyToAccount(generatePrivateKey()).signMessage({ message: challenge.message });
    expect(await messageOf(use(bad))).toEqual(["walletSignature: is not the wallet's EIP-191 signature of the challenge message"]);
    expect((await store.get(challenge.id))!.consumedAt).toBeNull();
    const used = await use(good);
    expect(used).toMatchObject({ id: challenge.id, consumedAt: now.getTime() });
    expect((await store.get(challenge.id))!.consumedAt).toBe(now.getTime());
    expect(await messageOf(use(good))).toEqual(["agreementChallengeId: the challenge was already used"]);
  });

  test("expired on the tenant's clock: refused before any signature check", async () => {
    const { use, good } = await issued();
    expect(await messageOf(use(good, new Date(now.getTime() + 300_000)))).toEqual(["agreementChallengeId: the challenge has expired"]);
  });

  test("10 concurrent verifiers of one challenge: exactly one consumes", async () => {
    const { store, challenge, good } = await issued();
    const read = (await store.get(challenge.id))!;
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () => verifyAndConsumeChallenge(store, {}, { challenge: read, walletSignature: good, allowedDomains: [], now, realNow: now })),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of results.filter((r) => r.status === "rejected")) {
      expect(((r as PromiseRejectedResult).reason as DomainError).detail).toEqual(["agreementChallengeId: the challenge was already used"]);
    }
  });
});
