import { decodeFunctionData, encodeEventTopics, getAddress, zeroAddress, type Address, type Hex } from "viem";
import { SIMULATED_OPERATOR } from "../chain-config.ts";
import type { EvmLog } from "../chain-port.ts";
import { SVC_POOL_ABI } from "../evm/svc-pool-abi.ts";
import type { SimChainContext } from "./sim-chain-context.ts";
import { erc20Transfer, spendAllowance } from "./sim-erc20.ts";
import { amountLog, decodeOrRevert, Revert } from "./sim-evm-call.ts";
import type { WorkingState } from "./sim-working-state.ts";

/**
 * The SvcPool contract's code (SvcPool.sol, statement by statement): repay by
 * anyone, straight from the payer to the named collections address; fund and
 * collect by the operator. pool-parity.test.ts runs the same cases against
 * this and the compiled contract on Anvil.
 */
export async function poolCall(ctx: SimChainContext, state: WorkingState, sender: Address, data: Hex): Promise<EvmLog[]> {
  const pool = ctx.pool();
  const operator = getAddress(SIMULATED_OPERATOR);
  const call = decodeOrRevert(() => decodeFunctionData({ abi: SVC_POOL_ABI, data }));
  switch (call.functionName) {
    case "repay": {
      const [loanId, collectionsArg, amount] = call.args;
      const collections = getAddress(collectionsArg);
      if (amount === 0n) throw new Revert("ZeroAmount()");
      if (collections === zeroAddress) throw new Revert("ZeroAddress()");
      // token.transferFrom(msg.sender, collections, amount): the pool is the spender, never the holder.
      await spendAllowance(ctx, state, sender, pool, amount);
      const transfer = await erc20Transfer(ctx, state, sender, collections, amount);
      const topics = encodeEventTopics({ abi: SVC_POOL_ABI, eventName: "Repaid", args: { loanId, payer: sender, collections } });
      return [transfer, amountLog(pool, topics, amount)];
    }
    case "fund": {
      const [loanId, borrower, amount] = call.args;
      if (sender !== operator) throw new Revert("NotOperator()");
      if (amount === 0n) throw new Revert("ZeroAmount()");
      const transfer = await erc20Transfer(ctx, state, pool, getAddress(borrower), amount);
      const topics = encodeEventTopics({ abi: SVC_POOL_ABI, eventName: "Funded", args: { loanId, borrower: getAddress(borrower) } });
      return [transfer, amountLog(pool, topics, amount)];
    }
    case "collect": {
      const [to, amount] = call.args;
      if (sender !== operator) throw new Revert("NotOperator()");
      const transfer = await erc20Transfer(ctx, state, pool, getAddress(to), amount);
      const topics = encodeEventTopics({ abi: SVC_POOL_ABI, eventName: "Collected", args: { to: getAddress(to) } });
      return [transfer, amountLog(pool, topics, amount)];
    }
    default:
      // token(), operator(): views.
      return [];
  }
}
