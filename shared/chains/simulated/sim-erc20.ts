import { decodeFunctionData, encodeEventTopics, erc20Abi, getAddress, zeroAddress, type Address, type Hex } from "viem";
import type { EvmLog } from "../chain-port.ts";
import type { SimChainContext } from "./sim-chain-context.ts";
import { amountLog, decodeOrRevert, Revert } from "./sim-evm-call.ts";
import { allowance, move, setAllowance } from "./sim-ledger-store.ts";
import type { WorkingState } from "./sim-working-state.ts";

/** The stablecoin's code, with USDC's (FiatToken) rules and revert messages. */
export async function stablecoinCall(ctx: SimChainContext, state: WorkingState, sender: Address, data: Hex): Promise<EvmLog[]> {
  const call = decodeOrRevert(() => decodeFunctionData({ abi: erc20Abi, data }));
  switch (call.functionName) {
    case "approve": {
      const [spender, value] = call.args;
      if (getAddress(spender) === zeroAddress) throw new Revert("ERC20: approve to the zero address");
      setAllowance(state, ctx.stablecoin, sender, getAddress(spender), value);
      return [approvalLog(ctx.stablecoin, sender, getAddress(spender), value)];
    }
    case "transfer": {
      const [to, value] = call.args;
      return [await erc20Transfer(ctx, state, sender, getAddress(to), value)];
    }
    case "transferFrom": {
      const [owner, to, value] = call.args;
      await spendAllowance(ctx, state, getAddress(owner), sender, value);
      return [await erc20Transfer(ctx, state, getAddress(owner), getAddress(to), value)];
    }
    default:
      // balanceOf, allowance, decimals, name, symbol, totalSupply: views change nothing.
      return [];
  }
}

/** The allowance half of `transferFrom`: reverts without writing when `spender` may not move `value`. */
export async function spendAllowance(ctx: SimChainContext, state: WorkingState, owner: Address, spender: Address, value: bigint): Promise<void> {
  const allowed = await allowance(state, ctx.stablecoin, owner, spender);
  if (value > allowed) throw new Revert("ERC20: transfer amount exceeds allowance");
  setAllowance(state, ctx.stablecoin, owner, spender, allowed - value);
}

/** A stablecoin transfer inside a call: reverts on the zero address or a short balance, else moves and logs. */
export async function erc20Transfer(ctx: SimChainContext, state: WorkingState, from: Address, to: Address, value: bigint): Promise<EvmLog> {
  if (to === zeroAddress) throw new Revert("ERC20: transfer to the zero address");
  const failure = await move(ctx, state, ctx.stablecoin, from, to, value);
  if (failure) throw new Revert("ERC20: transfer amount exceeds balance");
  return transferLog(ctx.stablecoin, from, to, value);
}

export function transferLog(token: string, from: Address, to: Address, value: bigint): EvmLog {
  return amountLog(token, encodeEventTopics({ abi: erc20Abi, eventName: "Transfer", args: { from, to } }), value);
}

function approvalLog(token: string, owner: Address, spender: Address, value: bigint): EvmLog {
  return amountLog(token, encodeEventTopics({ abi: erc20Abi, eventName: "Approval", args: { owner, spender } }), value);
}
