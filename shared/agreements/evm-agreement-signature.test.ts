import { describe, expect, test } from "bun:test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { ContractSignatureInput, ContractSignatureVerifier } from "../chains/chain-port.ts";
import type { Chain } from "../domain/rails.ts";
import { DomainError, toErrorBody } from "../domain/errors.ts";
import { verifyEvmAgreementSignature } from "./evm-agreement-signature.ts";

const message = "svc credit loan agreement\nChallenge: c1";

/** A port whose chain answers `answer`, recording what it was asked. */
function port(answer: boolean) {
  const asked: { chain: Chain; input: ContractSignatureInput }[] = [];
  const verifier: ContractSignatureVerifier = {
    verifyContractSignature: async (chain, input) => {
      asked.push({ chain, input });
      return answer;
    },
  };
  return { verifier, asked };
}

describe("verifyEvmAgreementSignature", () => {
  test("an EOA's signature verifies locally: the chain is never asked", async () => {
    const eoa = privateKeyToAccount(generatePrivateKey());
    const p = port(false);
    expect(await verifyEvmAgreementSignature(p.verifier, "POLYGON", { address: eoa.address, message, signature: await eoa.signMessage({ message }) })).toBe(
      true,
    );
    expect(p.asked).toEqual([]);
  });

  test("when ecrecover fails, the chain decides where the port can ask it; otherwise false", async () => {
    const wallet = privateKeyToAccount(generatePrivateKey()).address;
    const signature = await privateKeyToAccount(generatePrivateKey()).signMessage({ message });
    const yes = port(true);
    expect(await verifyEvmAgreementSignature(yes.verifier, "BASE", { address: wallet, message, signature })).toBe(true);
    expect(yes.asked).toEqual([{ chain: "BASE", input: { address: wallet, message, signature } }]);
    expect(await verifyEvmAgreementSignature(port(false).verifier, "BASE", { address: wallet, message, signature })).toBe(false);
    // The simulated chain port has no capability; no port at all: ecrecover only, as before.
    expect(await verifyEvmAgreementSignature({}, "POLYGON_AMOY", { address: wallet, message, signature })).toBe(false);
    expect(await verifyEvmAgreementSignature(null, "POLYGON_AMOY", { address: wallet, message, signature })).toBe(false);
  });

  test("a signature that is not hex never reaches the chain", async () => {
    const p = port(true);
    expect(
      await verifyEvmAgreementSignature(p.verifier, "BASE", { address: privateKeyToAccount(generatePrivateKey()).address, message, signature: "not-hex" }),
    ).toBe(false);
    expect(p.asked).toEqual([]);
  });

  test("a chain that cannot be reached is 503 with Retry-After, never a bad signature", async () => {
    const down = { verifyContractSignature: async () => Promise.reject(new Error("fetch failed")) };
    const signature = await privateKeyToAccount(generatePrivateKey()).signMessage({ message });
    const err = await verifyEvmAgreementSignature(down, "BASE", { address: privateKeyToAccount(generatePrivateKey()).address, message, signature }).catch(
      (e) => e,
    );
    expect(err).toBeInstanceOf(DomainError);
    expect(toErrorBody(err)).toEqual({
      statusCode: 503,
      error: "Service Unavailable",
      message: "The BASE chain could not be reached to check the wallet's signature; try again shortly",
    });
    expect(err.headers).toEqual({ "Retry-After": "30" });
  });
});
