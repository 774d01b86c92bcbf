import type { Hex } from "viem";
import type { PrivateKeyAccount } from "viem/accounts";

/**
 * Signs as the borrower's wallet: a repayment instruction's transaction as it
 * is (EIP-1559 with the chain id; the simulated chains charge no gas), for
 * every tier's tests and the chaos load.
 */
export const signAsBorrower = (account: PrivateKeyAccount, chainId: number, nonce: number, tx: { to: string; data: string }) =>
  account.signTransaction({
    chainId,
    nonce,
    to: tx.to as Hex,
    data: tx.data as Hex,
    value: 0n,
    gas: 200_000n,
    maxFeePerGas: 1n,
    maxPriorityFeePerGas: 1n,
    type: "eip1559",
  });
