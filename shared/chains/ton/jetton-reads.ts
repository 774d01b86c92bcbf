import { type Address, beginCell } from "@ton/core";
import type { TonNetwork } from "./ton-network.ts";

/** `owner`'s jetton wallet of `master`, from the master's own `get_wallet_address` (TEP-74). */
export async function jettonWalletOf(network: TonNetwork, master: Address, owner: Address): Promise<Address> {
  const stack = await network.runGetMethod(master, "get_wallet_address", [{ type: "slice", cell: beginCell().storeAddress(owner).endCell() }]);
  return stack.readAddress();
}

/** A jetton wallet's balance (base units): 0 while it is not deployed (nothing was ever sent to it). */
export async function jettonBalance(network: TonNetwork, jettonWallet: Address): Promise<bigint> {
  const account = await network.account(jettonWallet);
  if (account.state !== "active") return 0n;
  return (await network.runGetMethod(jettonWallet, "get_wallet_data")).readBigNumber();
}
