import { beforeAll, describe, expect, test } from "bun:test";
import { custom, serializeErc6492Signature, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { evmContractSignatures } from "./contract-signatures.ts";
import { createEvmEmulator, type EvmEmulator } from "./testing/evm-emulator.ts";
import { deployOwnerWalletFactory } from "./testing/owner-wallets.ts";

const MESSAGE = "svc credit loan agreement\nAmount: 100.00 USDC\nChallenge: 7f1c";
const AMOY = 80002;

let emu: EvmEmulator;
let factory: Awaited<ReturnType<typeof deployOwnerWalletFactory>>;
let port: ReturnType<typeof evmContractSignatures>;
beforeAll(async () => {
  emu = await createEvmEmulator(AMOY);
  factory = await deployOwnerWalletFactory(emu);
  port = evmContractSignatures({ POLYGON_AMOY: emu.transport });
});

const verify = (address: string, signature: Hex, message = MESSAGE) => port.verifyContractSignature("POLYGON_AMOY", { address, message, signature });

describe("ERC-1271: a deployed contract wallet", () => {
  test("its owner's signature of the message verifies; another key's, or the owner's of another message, does not", async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const wallet = await factory.createAccount(owner.address, 1n);
    expect(await emu.code(wallet)).not.toBe("0x");
    expect(await verify(wallet, await owner.signMessage({ message: MESSAGE }))).toBe(true);
    expect(await verify(wallet.toLowerCase(), await owner.signMessage({ message: MESSAGE }))).toBe(true);
    const stranger = privateKeyToAccount(generatePrivateKey());
    expect(await verify(wallet, await stranger.signMessage({ message: MESSAGE }))).toBe(false);
    expect(await verify(wallet, await owner.signMessage({ message: `${MESSAGE}!` }))).toBe(false);
    expect(await verify(wallet, "0x1234")).toBe(false);
  });
});

describe("ERC-6492: a counterfactual contract wallet", () => {
  test("the owner's wrapped signature verifies before deployment (and deploys nothing); a wrong owner's does not", async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const wallet = await factory.addressOf(owner.address, 2n);
    expect(await emu.code(wallet)).toBe("0x");
    const wrap = async (signer: typeof owner, forOwner = owner.address) =>
      serializeErc6492Signature({
        address: factory.address,
        data: factory.createAccountCalldata(forOwner, 2n),
        signature: await signer.signMessage({ message: MESSAGE }),
      });
    expect(await verify(wallet, await wrap(owner))).toBe(true);
    expect(await emu.code(wallet)).toBe("0x");
    const stranger = privateKeyToAccount(generatePrivateKey());
    expect(await verify(wallet, await wrap(stranger))).toBe(false);
    // The stranger's factory data deploys a different wallet, not this address.
    expect(await verify(wallet, await wrap(stranger, stranger.address))).toBe(false);
    // Unwrapped, the owner's signature says nothing about an undeployed contract.
    expect(await verify(wallet, await owner.signMessage({ message: MESSAGE }))).toBe(false);
  });
});

describe("EOA and configuration", () => {
  test("a plain EOA signature verifies through the same capability; another key's does not", async () => {
    const eoa = privateKeyToAccount(generatePrivateKey());
    expect(await verify(eoa.address, await eoa.signMessage({ message: MESSAGE }))).toBe(true);
    expect(await verify(eoa.address, await privateKeyToAccount(generatePrivateKey()).signMessage({ message: MESSAGE }))).toBe(false);
  });

  test("a chain without a transport, a non-EVM chain or a malformed address answers false", async () => {
    const eoa = privateKeyToAccount(generatePrivateKey());
    const signature = await eoa.signMessage({ message: MESSAGE });
    expect(await port.verifyContractSignature("BASE", { address: eoa.address, message: MESSAGE, signature })).toBe(false);
    expect(await evmContractSignatures({ TON: emu.transport }).verifyContractSignature("TON", { address: eoa.address, message: MESSAGE, signature })).toBe(
      false,
    );
    expect(await verify("0x123", signature)).toBe(false);
  });

  test("an RPC on another chain id, or one that is down, throws instead of judging", async () => {
    const eoa = privateKeyToAccount(generatePrivateKey());
    const signature = await eoa.signMessage({ message: MESSAGE });
    const wrongChain = evmContractSignatures({ BASE_SEPOLIA: emu.transport });
    await expect(wrongChain.verifyContractSignature("BASE_SEPOLIA", { address: eoa.address, message: MESSAGE, signature })).rejects.toThrow(
      "reports chain id 80002, not 84532",
    );
    let up = true;
    const flaky = custom(
      {
        request: (args: { method: string; params?: unknown }) => {
          if (!up) throw Object.assign(new Error("connection refused"), { code: -32603 });
          return emu.transport({ retryCount: 0 }).request(args as never);
        },
      },
      { retryCount: 0 },
    );
    const down = evmContractSignatures({ POLYGON_AMOY: flaky });
    const stranger = await privateKeyToAccount(generatePrivateKey()).signMessage({ message: MESSAGE });
    expect(await down.verifyContractSignature("POLYGON_AMOY", { address: eoa.address, message: MESSAGE, signature: stranger })).toBe(false);
    up = false;
    await expect(down.verifyContractSignature("POLYGON_AMOY", { address: eoa.address, message: MESSAGE, signature: stranger })).rejects.toThrow();
  });
});
