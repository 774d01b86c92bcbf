import { readFileSync } from "node:fs";
import solc from "solc";

export type CompiledContract = { abi: unknown[]; bytecode: `0x${string}` };

/**
 * Compiles one contract of a Solidity file with the `solc` npm package (the
 * compiler the tests and `npm run dev:live` run, so what is deployed on Anvil
 * is exactly the source in the repository).
 *
 * @example compileContract(POOL_SOURCE_PATH, "SvcPool") // { abi, bytecode: "0x6080…" }
 */
export function compileContract(path: string, contractName: string): CompiledContract {
  const file = path.split("/").pop()!;
  const input = {
    language: "Solidity",
    sources: { [file]: { content: readFileSync(path, "utf8") } },
    settings: { optimizer: { enabled: true, runs: 200 }, outputSelection: { "*": { [contractName]: ["abi", "evm.bytecode.object"] } } },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join("\n"));
  const contract = output.contracts[file]![contractName]!;
  return { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
}
