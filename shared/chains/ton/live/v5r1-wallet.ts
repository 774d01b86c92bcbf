import type { Address } from "@ton/core";
import { WalletContractV5R1 } from "@ton/ton";

/** The network ids a v5r1 wallet id may be built for: mainnet, then testnet (as the signer check accepts). */
const NETWORK_GLOBAL_IDS = [-239, -3];

/**
 * The standard wallet v5r1 (default subwallet) of `publicKey` whose address is
 * `address`, or null when no such wallet has it. The wallet id is part of the
 * address, so the variant that matches is the one that signs correctly.
 */
export function v5r1WalletAt(address: Address, publicKey: Buffer): WalletContractV5R1 | null {
  const workchain = address.workChain;
  for (const networkGlobalId of NETWORK_GLOBAL_IDS) {
    for (const contextWorkchain of workchain === 0 ? [0] : [workchain, 0]) {
      const wallet = new WalletContractV5R1(workchain, publicKey, {
        networkGlobalId,
        context: { walletVersion: "v5r1", workchain: contextWorkchain, subwalletNumber: 0 },
      });
      if (wallet.address.equals(address)) return wallet;
    }
  }
  return null;
}
