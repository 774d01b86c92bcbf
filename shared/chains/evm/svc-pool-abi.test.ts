import { expect, test } from "bun:test";
import { compilePool } from "./compile-pool.ts";
import { SVC_POOL_ABI } from "./svc-pool-abi.ts";

test("SvcPool.sol compiles, and the ABI the service uses is exactly the compiler's", () => {
  const { abi, bytecode } = compilePool();
  expect(bytecode).toMatch(/^0x[0-9a-f]{200,}$/);
  expect(abi).toEqual(JSON.parse(JSON.stringify(SVC_POOL_ABI)));
  const names = abi.map((e) => `${(e as { type: string }).type}:${(e as { name?: string }).name ?? ""}`);
  expect(names).toEqual(expect.arrayContaining(["function:repay", "function:fund", "event:Repaid", "event:Funded"]));
}, 60_000);
