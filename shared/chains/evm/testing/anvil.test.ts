import { afterAll, beforeAll, expect, test } from "bun:test";
import { erc20Abi } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { type AnvilNode, ANVIL_KEYS, deployRehearsalContracts, mintUsdc, type RehearsalDeployment, startAnvil } from "./anvil.ts";

let node: AnvilNode;
let deployment: RehearsalDeployment;
beforeAll(async () => {
  node = await startAnvil({ chainId: 137 });
  deployment = await deployRehearsalContracts(node);
}, 60_000);
afterAll(() => node?.stop());

test("Anvil from npm runs as chain 137 with the rehearsal USDC (6 decimals, open mint) and the pool deployed", async () => {
  expect(await node.public.getChainId()).toBe(137);
  expect((await node.public.getCode({ address: deployment.pool }))?.length).toBeGreaterThan(100);
  expect(await node.public.readContract({ address: deployment.usdc, abi: erc20Abi, functionName: "decimals" })).toBe(6);
  const holder = privateKeyToAccount(ANVIL_KEYS[3]!).address;
  await mintUsdc(node, deployment, holder, 1_234_560_000n);
  expect(await node.public.readContract({ address: deployment.usdc, abi: erc20Abi, functionName: "balanceOf", args: [holder] })).toBe(1_234_560_000n);
});
