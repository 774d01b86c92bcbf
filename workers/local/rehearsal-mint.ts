import { type Address, getAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { parseAmount } from "../../shared/domain/money.ts";
import { ANVIL_KEYS } from "../../shared/chains/evm/testing/anvil.ts";

/**
 * `bun workers/local/rehearsal-mint.ts <POLYGON|BASE> <address> <amount> [native]`:
 * gives a wallet test USDC on the rehearsal's Anvil (the token's mint is
 * open), and with `native` also 10 of the native coin for gas. Reads the RPC
 * and token from the same variables `npm run dev:live` prints, defaulting to
 * its ports and the first deployment's addresses.
 */
const [chain = "", to = "", amount = "", native] = process.argv.slice(2);
const defaults = { POLYGON: { rpc: "http://127.0.0.1:8545" }, BASE: { rpc: "http://127.0.0.1:8546" } } as const;
if (!(chain in defaults) || !/^0x[0-9a-fA-F]{40}$/.test(to) || parseAmount(amount, 6) === null) {
  console.error("usage: bun workers/local/rehearsal-mint.ts <POLYGON|BASE> <0x address> <amount> [native]");
  process.exit(2);
}
const rpc = process.env[`${chain}_RPC_URL`] ?? defaults[chain as keyof typeof defaults].rpc;
const deployer = privateKeyToAccount(ANVIL_KEYS[0]!);
// Account #0's first deployment is the test USDC (see deployRehearsalContracts).
const { getContractAddress, encodeFunctionData, parseAbi } = await import("viem");
const token = (process.env[`${chain}_TOKEN_ADDRESS`] as Address | undefined) ?? getContractAddress({ from: deployer.address, nonce: 0n });
const call = async (method: string, params: unknown[]) => {
  const res = await fetch(rpc, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(body.error.message);
  return body.result;
};
const data = encodeFunctionData({ abi: parseAbi(["function mint(address,uint256)"]), functionName: "mint", args: [getAddress(to), parseAmount(amount, 6)!] });
await call("eth_sendTransaction", [{ from: deployer.address, to: token, data }]);
if (native) await call("anvil_setBalance", [getAddress(to), `0x${(10n * 10n ** 18n).toString(16)}`]);
console.log(`minted ${amount} USDC to ${getAddress(to)} on ${chain}${native ? " (and set 10 native for gas)" : ""}`);
