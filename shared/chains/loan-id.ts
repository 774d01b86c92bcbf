/**
 * How a loan id travels on-chain: the UUID's 16 bytes, left-aligned in a
 * bytes32 and zero-padded on the right (`0x<32 hex of the uuid><32 zeros>`),
 * so the pool contract's `loanId` maps back to the loan without a lookup.
 *
 * @example loanIdToBytes32("5b0e1c0a-6f7d-4c1e-9a3b-2f1d0c9e8a7b")
 * // "0x5b0e1c0a6f7d4c1e9a3b2f1d0c9e8a7b00000000000000000000000000000000"
 */
export function loanIdToBytes32(loanId: string): `0x${string}` {
  const hex = loanId.replace(/-/g, "").toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(hex)) throw new RangeError(`not a loan id: ${loanId}`);
  return `0x${hex}${"0".repeat(32)}`;
}

/** The loan id in a bytes32, or null when it is not one this service wrote. */
export function bytes32ToLoanId(value: string): string | null {
  const m = /^0x([0-9a-fA-F]{32})0{32}$/.exec(value);
  if (!m) return null;
  const h = m[1]!.toLowerCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
