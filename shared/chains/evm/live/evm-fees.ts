/** Fees of one EIP-1559 transaction, in wei. */
export type EvmFees = { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };

/** Nodes accept a replacement of a pending transaction only with both fees at least 10% higher (geth; Anvil likewise); 12.5% clears every common node. */
const BUMP_NUMERATOR = 1125n;
const BUMP_DENOMINATOR = 1000n;

const bumped = (fee: bigint) => (fee * BUMP_NUMERATOR + BUMP_DENOMINATOR - 1n) / BUMP_DENOMINATOR;
const max = (a: bigint, b: bigint) => (a > b ? a : b);

/**
 * The fees of a replacement: at least 12.5% over the stuck transaction's on
 * both fields (rounded up), and no less than what the chain asks now.
 *
 * @example replacementFees({ maxFeePerGas: 100n, maxPriorityFeePerGas: 8n }, { maxFeePerGas: 90n, maxPriorityFeePerGas: 1n }) // { maxFeePerGas: 113n, maxPriorityFeePerGas: 9n }
 */
export function replacementFees(stuck: EvmFees, current: EvmFees): EvmFees {
  const maxPriorityFeePerGas = max(bumped(stuck.maxPriorityFeePerGas), current.maxPriorityFeePerGas);
  const maxFeePerGas = max(max(bumped(stuck.maxFeePerGas), current.maxFeePerGas), maxPriorityFeePerGas);
  return { maxFeePerGas, maxPriorityFeePerGas };
}
