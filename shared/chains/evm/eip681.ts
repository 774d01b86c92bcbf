import type { EvmRepaymentInstructions } from "../repayment-instructions.ts";

/**
 * The two steps of an EVM repayment as EIP-681 payment-request links, which a
 * wallet app opens (or scans from a QR code) pre-filled: the stablecoin
 * `approve` of the pool for the amount due, then the pool's
 * `repay(loanId, collections, amount)`. The same calls as the instructions'
 * `transactions`, in the same order.
 *
 * @example evmPaymentLinks(i).approve // "ethereum:0x41E9…@80002/approve?address=0xPool…&uint256=102000000"
 */
export function evmPaymentLinks(i: Pick<EvmRepaymentInstructions, "chainId" | "token" | "spender" | "collections" | "amountUnits" | "loanIdBytes32">) {
  return {
    approve: `ethereum:${i.token.address}@${i.chainId}/approve?address=${i.spender}&uint256=${i.amountUnits}`,
    repay: `ethereum:${i.spender}@${i.chainId}/repay?bytes32=${i.loanIdBytes32}&address=${i.collections}&uint256=${i.amountUnits}`,
  };
}
