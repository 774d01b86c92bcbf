import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { serializeErc6492Signature, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { loans } from "../../../../db/schema/loans.ts";
import { evmContractSignatures } from "../../../../shared/chains/evm/contract-signatures.ts";
import { createEvmEmulator, type EvmEmulator } from "../../../../shared/chains/evm/testing/evm-emulator.ts";
import { deployOwnerWalletFactory } from "../../../../shared/chains/evm/testing/owner-wallets.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import { bearer, createKey, signUpTenant } from "../../../../shared/testing/fixtures.ts";
import { createEmbedTestApp } from "../../testing/harness.ts";

const ORIGIN = "https://shop.example";
let t: TestApp;
let emu: EvmEmulator;
let factory: Awaited<ReturnType<typeof deployOwnerWalletFactory>>;
/** The widget with a chain adapter that calls the (emulated) chain. */
let live: ReturnType<typeof createEmbedTestApp>;
/** The widget as the sandbox runs it: the simulated chain, which executes no contracts. */
let simulated: ReturnType<typeof createEmbedTestApp>;
beforeAll(async () => {
  t = await createTestApp();
  // The default program's rail is POLYGON_AMOY (chain id 80002).
  emu = await createEvmEmulator(80002);
  factory = await deployOwnerWalletFactory(emu);
  live = createEmbedTestApp(t, { chain: evmContractSignatures({ POLYGON_AMOY: emu.transport }) });
  simulated = createEmbedTestApp(t);
});
afterAll(() => t.close());

/** A tenant whose default program allows ORIGIN. */
async function merchant() {
  const owner = await signUpTenant(t);
  const { key } = await createKey(t, owner.token);
  const program = (await t.request("GET", "/v1/me", { headers: { "x-api-key": key } })).body.widgetPrograms[0];
  await t.request("PUT", `/v1/widget-programs/${program.id}`, {
    body: { name: program.name, merchantConfigId: program.merchantConfigId, allowedOrigins: [ORIGIN] },
    headers: bearer(owner.token),
  });
  return { programId: program.id as string, embedKey: program.embedKey as string };
}

type Widget = ReturnType<typeof createEmbedTestApp>;
type M = Awaited<ReturnType<typeof merchant>>;
const call = (e: Widget, m: M, path: string, body: unknown) => e.request("POST", `/v1/embed/${m.embedKey}${path}`, { body, headers: { origin: ORIGIN } });

async function quote(e: Widget, m: M, wallet: Address) {
  const res = await call(e, m, "/quote", { walletAddress: wallet, amount: "100.00", tenureDays: 7 });
  expect(res.status).toBe(200);
  return res.body.agreementChallenge as { id: string; message: string };
}

const accept = (e: Widget, m: M, wallet: Address, challengeId: string, walletSignature: string) =>
  call(e, m, "/accept", { walletAddress: wallet, amount: "100.00", tenureDays: 7, agreementChallengeId: challengeId, walletSignature, channel: "WEB" });

const loansOf = (m: M) => t.db.select().from(loans).where(eq(loans.programId, m.programId));

describe("accept with a smart-contract wallet (ERC-1271 / ERC-6492)", () => {
  test("a deployed 1271 wallet: its owner's signature makes the loan; a stranger's is 400 with no loan", async () => {
    const m = await merchant();
    const owner = privateKeyToAccount(generatePrivateKey());
    const wallet = await factory.createAccount(owner.address, 1n);
    const challenge = await quote(live, m, wallet);

    const stranger = await privateKeyToAccount(generatePrivateKey()).signMessage({ message: challenge.message });
    const refused = await accept(live, m, wallet, challenge.id, stranger);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toEqual(["walletSignature: is not the wallet's EIP-191 signature of the challenge message"]);
    expect(await loansOf(m)).toEqual([]);

    const res = await accept(live, m, wallet, challenge.id, await owner.signMessage({ message: challenge.message }));
    expect(res.status).toBe(201);
    expect(res.body.loan).toMatchObject({ status: "ACTIVE", borrowerWalletAddress: wallet, program: m.programId, principalAmount: "100.00" });
    expect(await loansOf(m)).toHaveLength(1);
  });

  test("a counterfactual wallet: the owner's ERC-6492-wrapped signature makes the loan; a wrong owner's is 400", async () => {
    const m = await merchant();
    const owner = privateKeyToAccount(generatePrivateKey());
    const wallet = await factory.addressOf(owner.address, 2n);
    const challenge = await quote(live, m, wallet);
    const wrapped = async (signer: typeof owner) =>
      serializeErc6492Signature({
        address: factory.address,
        data: factory.createAccountCalldata(owner.address, 2n),
        signature: await signer.signMessage({ message: challenge.message }),
      });

    const refused = await accept(live, m, wallet, challenge.id, await wrapped(privateKeyToAccount(generatePrivateKey())));
    expect(refused.status).toBe(400);
    expect(await loansOf(m)).toEqual([]);
    const res = await accept(live, m, wallet, challenge.id, await wrapped(owner));
    expect(res.status).toBe(201);
    expect(await emu.code(wallet)).toBe("0x");
  });

  test("an EOA still signs as before with the capability present", async () => {
    const m = await merchant();
    const eoa = privateKeyToAccount(generatePrivateKey());
    const challenge = await quote(live, m, eoa.address);
    expect((await accept(live, m, eoa.address, challenge.id, await eoa.signMessage({ message: challenge.message }))).status).toBe(201);
  });

  test("on the simulated chain (no capability) the owner's signature for a contract wallet is 400, no loan", async () => {
    const m = await merchant();
    const owner = privateKeyToAccount(generatePrivateKey());
    const wallet = await factory.createAccount(owner.address, 3n);
    const challenge = await quote(simulated, m, wallet);
    const res = await accept(simulated, m, wallet, challenge.id, await owner.signMessage({ message: challenge.message }));
    expect(res.status).toBe(400);
    expect(res.body.message[0]).toStartWith("walletSignature:");
    expect(await loansOf(m)).toEqual([]);
  });
});
