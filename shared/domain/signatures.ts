/**
 * Wallet signatures over agreement challenges (DECISIONS.md "Embed and
 * widget", accept). Pure: recovery is local secp256k1 math, no RPC, so a
 * smart-contract wallet (EIP-1271) is not supported here.
 */
import { isAddress, isHex, recoverMessageAddress } from "viem";

/**
 * True when `signature` is an EIP-191 `personal_sign` of `message` by the key
 * behind `address` (compared case-insensitively). Any malformed input gives
 * false, never a throw, because it arrives straight from a browser.
 *
 * @example await verifyEvmPersonalSignature({ address: account.address, message, signature: await account.signMessage({ message }) }) // true
 */
export async function verifyEvmPersonalSignature(input: { address: string; message: string; signature: string }): Promise<boolean> {
  const { address, message, signature } = input;
  if (!isAddress(address, { strict: false })) return false;
  // r ‖ s ‖ v, 65 bytes. The 64-byte compact form (EIP-2098) is not what personal_sign returns.
  if (!isHex(signature, { strict: true }) || signature.length !== 2 + 130) return false;
  try {
    const signer = await recoverMessageAddress({ message, signature });
    return signer.toLowerCase() === address.toLowerCase();
  } catch {
    // Not a point on the curve, r or s out of range, or a v that is not 0, 1, 27 or 28.
    return false;
  }
}
