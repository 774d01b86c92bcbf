import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Buffer } from "node:buffer";
import { Address } from "@ton/core";
import { keyPairFromSeed } from "@ton/crypto";
import { WalletContractV4, WalletContractV5R1 } from "@ton/ton";
import { eq } from "drizzle-orm";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { signers } from "../../db/schema/wallets.ts";
import { DomainError } from "../domain/errors.ts";
import { openSecret } from "../crypto/secret-box.ts";
import { signUpTenant } from "../testing/fixtures.ts";
import { createTestApp, type TestApp } from "../testing/harness.ts";
import { installSigner } from "./install-signer.ts";

const SECRETS_KEY = "test-secrets-key-for-signers";
const UNKNOWN_ID = "7d2f4a0e-7c1b-4b8e-9a57-0c6f0c2d9e11";

let app: TestApp;
let tenantId: string;
/** Everything the flow answered: returned values and error bodies. */
const answers: string[] = [];

beforeAll(async () => {
  app = await createTestApp();
  tenantId = (await signUpTenant(app, "Signer Co")).tenantId;
});
afterAll(() => app.close());

const deps = () => ({ db: app.db, secretsKey: SECRETS_KEY, log: app.deps.log });

/** Installs and records what came back (a value or the error), for the leak check at the end. */
async function install(input: { chain: string; address: string; privateKey: string; tenantId?: string }) {
  try {
    const result = await installSigner(deps(), { tenantId, now: app.clock.now(), ...input });
    answers.push(JSON.stringify(result));
    return { ok: true as const, result };
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    answers.push(JSON.stringify({ message: error.message, body: error }), String(error.stack));
    return { ok: false as const, error };
  }
}

const expectRefused = (outcome: Awaited<ReturnType<typeof install>>, status: number, text: string) => {
  expect(outcome.ok).toBe(false);
  if (outcome.ok) return;
  expect(outcome.error.status).toBe(status);
  expect(JSON.stringify(outcome.error.message)).toContain(text);
};

/** Every spelling of a key a leak could take. */
const spellings = (hex: string) => {
  const bare = hex.replace(/^0x/, "").toLowerCase();
  return [bare, bare.toUpperCase(), Buffer.from(bare, "hex").toString("base64"), Buffer.from(bare, "hex").toString("base64url")];
};
const usedKeys: string[] = [];

function tonKey(version: "v4" | "v5r1" = "v5r1") {
  const seed = Buffer.from(crypto.getRandomValues(new Uint8Array(32)));
  const keys = keyPairFromSeed(seed);
  const contract =
    version === "v4"
      ? WalletContractV4.create({ workchain: 0, publicKey: keys.publicKey })
      : WalletContractV5R1.create({ publicKey: keys.publicKey, walletId: { networkGlobalId: -239 } });
  usedKeys.push(seed.toString("hex"), keys.secretKey.toString("hex"));
  return { seed, secretKey: keys.secretKey, address: contract.address.toString({ bounceable: false }) };
}

describe("installSigner: EVM", () => {
  test("a key that derives the address: sealed under SECRETS_KEY, answered as { id, chain, address }", async () => {
    const privateKey = generatePrivateKey();
    usedKeys.push(privateKey);
    const address = privateKeyToAccount(privateKey).address;
    const outcome = await install({ chain: "POLYGON", address: address.toLowerCase(), privateKey });
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.result).toEqual({ id: expect.any(String), chain: "POLYGON", address });
    const [row] = await app.db.select().from(signers).where(eq(signers.id, outcome.result.id));
    expect(row).toMatchObject({ tenantId, chain: "POLYGON", address });
    expect(row!.sealedKey).toStartWith("v1.");
    expect(await openSecret(row!.sealedKey, SECRETS_KEY)).toBe(privateKey);
    await expect(openSecret(row!.sealedKey, "another key")).rejects.toThrow();

    // Installing again (rotation, or a retry) replaces the sealed key of the same signer.
    const again = await install({ chain: "POLYGON", address, privateKey: privateKey.slice(2).toUpperCase() });
    expect(again.ok && again.result.id).toBe(outcome.result.id);
    expect(await app.db.select().from(signers).where(eq(signers.address, address))).toHaveLength(1);
  });

  test("a key that does not derive the address: 400, nothing stored", async () => {
    const privateKey = generatePrivateKey();
    usedKeys.push(privateKey);
    const address = privateKeyToAccount(generatePrivateKey()).address;
    expectRefused(await install({ chain: "BASE", address, privateKey }), 400, "privateKey: does not derive address");
    expect(await app.db.select().from(signers).where(eq(signers.address, address))).toHaveLength(0);
  });

  test.each([
    ["too short", "0x1234"],
    ["not hex", `0x${"zz".repeat(32)}`],
    ["zero", `0x${"00".repeat(32)}`],
    ["over the curve order", `0x${"ff".repeat(32)}`],
    ["empty", ""],
  ])("a key that is %s: 400 naming privateKey", async (_name, privateKey) => {
    expectRefused(await install({ chain: "BASE", address: privateKeyToAccount(generatePrivateKey()).address, privateKey }), 400, "privateKey:");
  });
});

describe("installSigner: TON", () => {
  test("a v5r1 wallet's 32-byte seed (hex) and 64-byte secret key (base64) both install", async () => {
    const key = tonKey("v5r1");
    const bySeed = await install({ chain: "TON", address: key.address, privateKey: key.seed.toString("hex") });
    expect(bySeed.ok).toBe(true);
    if (!bySeed.ok) return;
    expect(bySeed.result.address).toMatch(/^0:[0-9a-f]{64}$/);
    const bySecret = await install({ chain: "TON", address: key.address, privateKey: key.secretKey.toString("base64") });
    expect(bySecret.ok && bySecret.result.id).toBe(bySeed.result.id);
    const [row] = await app.db.select().from(signers).where(eq(signers.id, bySeed.result.id));
    expect(await openSecret(row!.sealedKey, SECRETS_KEY)).toBe(key.seed.toString("hex"));
  });

  test("a v4 wallet's key: 400, since funding signs as v5r1 and every transfer from it would fail (found by an audit)", async () => {
    const key = tonKey("v4");
    expectRefused(await install({ chain: "TON", address: key.address, privateKey: key.seed.toString("hex") }), 400, "wallet v4");
    expect(
      await app.db
        .select()
        .from(signers)
        .where(eq(signers.address, Address.parse(key.address).toRawString())),
    ).toEqual([]);
  });

  test("another key's seed: 400; a secret key whose halves disagree: 400", async () => {
    const key = tonKey();
    const stranger = tonKey();
    expectRefused(await install({ chain: "TON", address: key.address, privateKey: stranger.seed.toString("hex") }), 400, "does not derive address");
    const spliced = Buffer.concat([stranger.seed, key.secretKey.subarray(32)]);
    expectRefused(await install({ chain: "TON", address: key.address, privateKey: spliced.toString("hex") }), 400, "public half");
    expectRefused(await install({ chain: "TON", address: key.address, privateKey: "abcd" }), 400, "privateKey:");
  });
});

describe("installSigner: inputs", () => {
  test("a sandbox chain, a bad address or an unknown tenant: 400 / 404", async () => {
    const privateKey = generatePrivateKey();
    usedKeys.push(privateKey);
    const address = privateKeyToAccount(privateKey).address;
    expectRefused(await install({ chain: "POLYGON_AMOY", address, privateKey }), 400, "chain:");
    expectRefused(await install({ chain: "POLYGON", address: "0x1234", privateKey }), 400, "address");
    expectRefused(await install({ chain: "POLYGON", address, privateKey, tenantId: UNKNOWN_ID }), 404, "Tenant not found");
  });
});

describe("installSigner: the key is never returned, stored or logged in the clear", () => {
  test("no answer, log line or stored column holds any spelling of any key used above", async () => {
    expect(usedKeys.length).toBeGreaterThan(5);
    expect(app.logs.some((line) => line.includes("signer installed"))).toBe(true);
    const stored = JSON.stringify(await app.db.select().from(signers));
    for (const key of usedKeys) {
      for (const spelling of spellings(key)) {
        for (const haystack of [...answers, ...app.logs, stored]) expect(haystack.includes(spelling)).toBe(false);
      }
    }
  });
});
