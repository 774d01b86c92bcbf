import { isHex } from "viem";
import type { ContractSignatureVerifier } from "../chains/chain-port.ts";
import type { Chain } from "../domain/rails.ts";
import { unavailable } from "../domain/errors.ts";
import { verifyEvmPersonalSignature } from "../domain/signatures.ts";

/**
 * True when `signature` is the EVM wallet's signature of an agreement
 * message: an EOA's EIP-191 `personal_sign` (local ecrecover), or else, where
 * the chain adapter can call the chain (`chain.verifyContractSignature`), a
 * smart-contract wallet's (ERC-1271 deployed, ERC-6492 counterfactual). The
 * chain is asked only when ecrecover fails (a contract wallet's signature, a
 * 6492-wrapped one longer than 65 bytes, or a bad one), so an EOA never waits
 * on an RPC. Without the capability (the simulated chains) only ecrecover
 * counts, as before. When the chain cannot be asked: 503 with Retry-After
 * (the challenge is not consumed; the borrower retries), never "bad signature".
 *
 * @example await verifyEvmAgreementSignature(deps.chain, "POLYGON", { address, message, signature }) // false for a stranger's signature
 */
export async function verifyEvmAgreementSignature(
  port: ContractSignatureVerifier | null | undefined,
  chain: Chain,
  input: { address: string; message: string; signature: string },
): Promise<boolean> {
  if (await verifyEvmPersonalSignature(input)) return true;
  if (!port?.verifyContractSignature || !isHex(input.signature, { strict: true })) return false;
  try {
    return await port.verifyContractSignature(chain, { address: input.address, message: input.message, signature: input.signature });
  } catch {
    throw unavailable(`The ${chain} chain could not be reached to check the wallet's signature; try again shortly`);
  }
}
