import { encodeFunctionData, getAddress, maxUint256, parseAbi, zeroAddress, type Address } from "viem";
import { include } from "./sim-blocks.ts";
import { positiveAmount, type SimChainContext } from "./sim-chain-context.ts";
import type { SimFaucetInput, SimFaucetResult } from "./sim-chain-ops.ts";
import { SimChainRejected } from "./sim-chain-rejected.ts";
import { transferLog } from "./sim-erc20.ts";
import { balance, setBalance } from "./sim-ledger-store.ts";
import type { WorkingState } from "./sim-working-state.ts";

/** The account that sends the faucet's `mint` calls on the simulated EVM chains. */
export const SIM_FAUCET_MINTER: Address = getAddress("0x00000000000000000000000000000000000fa0c7");

const mintAbi = parseAbi(["function mint(address to, uint256 amount) returns (bool)"]);

/**
 * Mints test tokens to `input.address`, recorded as a real chain shows a
 * mint: on EVM a `mint` call with a Transfer log from 0x0, on TON and Solana a
 * transfer from the jetton master or mint.
 */
export async function faucet(ctx: SimChainContext, state: WorkingState, input: SimFaucetInput): Promise<SimFaucetResult> {
  const to = ctx.address(input.address, "address");
  const amount = positiveAmount(input.amount);
  const token = ctx.token(input.token);
  if (ctx.config.family === "EVM" && token !== ctx.stablecoin) {
    throw new SimChainRejected(`the faucet on ${ctx.chain} mints only the stablecoin ${ctx.stablecoin}`);
  }
  const held = await balance(ctx, state, token, to);
  if (held + amount > maxUint256) throw new SimChainRejected("amount would overflow the balance");
  setBalance(state, token, to, held + amount);
  const tx = await include(ctx, state, ({ number, timestamp }) =>
    ctx.config.family === "EVM"
      ? {
          family: "EVM",
          chain: ctx.chain,
          hash: ctx.syntheticHash("faucet", number, to, amount),
          blockNumber: number,
          timestamp,
          from: SIM_FAUCET_MINTER,
          to: token,
          input: encodeFunctionData({ abi: mintAbi, functionName: "mint", args: [to as Address, amount] }),
          status: "success",
          logs: [transferLog(token, zeroAddress, to as Address, amount)],
          sandboxTenantId: input.sandboxTenantId ?? null,
          kind: "faucet",
          failureReason: null,
        }
      : {
          // Minted by the jetton master (TON) or the mint authority (Solana).
          family: ctx.transferFamily(),
          chain: ctx.chain,
          hash: ctx.syntheticHash("faucet", number, to, amount),
          blockNumber: number,
          timestamp,
          from: token,
          to,
          token,
          amount,
          comment: null,
          status: "success",
          sandboxTenantId: input.sandboxTenantId ?? null,
          kind: "faucet",
          failureReason: null,
        },
  );
  return { txHash: tx.hash, blockNumber: tx.blockNumber };
}
