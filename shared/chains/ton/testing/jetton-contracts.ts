import { readFileSync } from "node:fs";
import { join } from "node:path";
import { compileFunc } from "@ton-community/func-js";
import { type Address, beginCell, Cell, contractAddress, toNano } from "@ton/core";
import type { Blockchain, SandboxContract, TreasuryContract } from "@ton/sandbox";
import { JETTON_OP } from "../jetton-messages.ts";

const SOURCES_DIR = join(import.meta.dir, "jetton");
const LIBRARIES = ["stdlib.fc", "params.fc", "op-codes.fc", "jetton-utils.fc"];
/** The minter's `mint` op in the reference contract. */
const MINT_OP = 21;

let compiled: Promise<{ minter: Cell; wallet: Cell }> | null = null;

async function compile(main: string): Promise<Cell> {
  const sources = Object.fromEntries([...LIBRARIES, main].map((f) => [f, readFileSync(join(SOURCES_DIR, f), "utf8")]));
  const result = await compileFunc({ targets: [...LIBRARIES, main], sources });
  if (result.status === "error") throw new Error(`FunC: ${result.message}`);
  return Cell.fromBase64(result.codeBoc);
}

/** The TEP-74 reference minter and wallet code, compiled once per process from the committed FunC sources. */
export function jettonCode(): Promise<{ minter: Cell; wallet: Cell }> {
  compiled ??= Promise.all([compile("jetton-minter.fc"), compile("jetton-wallet.fc")]).then(([minter, wallet]) => ({ minter, wallet }));
  return compiled;
}

export type TestJetton = {
  master: Address;
  /** Mints `amount` base units to `owner`'s jetton wallet (deploying it). */
  mint(owner: Address, amount: bigint): Promise<void>;
};

/**
 * Deploys a jetton master (the reference minter) administered by `admin`.
 * `name` makes distinct masters (the canonical USDT, a look-alike).
 */
export async function deployJetton(_blockchain: Blockchain, admin: SandboxContract<TreasuryContract>, name: string): Promise<TestJetton> {
  const code = await jettonCode();
  const data = beginCell()
    .storeCoins(0)
    .storeAddress(admin.address)
    .storeRef(beginCell().storeUint(1, 8).storeStringTail(name).endCell())
    .storeRef(code.wallet)
    .endCell();
  const init = { code: code.minter, data };
  const master = contractAddress(0, init);
  // An empty body deploys it: the minter accepts and ignores empty messages.
  await admin.send({ to: master, value: toNano("0.1"), bounce: false, init, body: Cell.EMPTY });
  return {
    master,
    async mint(owner, amount) {
      const transfer = beginCell()
        .storeUint(JETTON_OP.internalTransfer, 32)
        .storeUint(0, 64)
        .storeCoins(amount)
        .storeAddress(null)
        .storeAddress(admin.address)
        .storeCoins(0)
        .storeMaybeRef(null)
        .endCell();
      const body = beginCell().storeUint(MINT_OP, 32).storeUint(0, 64).storeAddress(owner).storeCoins(toNano("0.05")).storeRef(transfer).endCell();
      const result = await admin.send({ to: master, value: toNano("0.1"), body });
      const failed = result.transactions.find((tx) => tx.description.type === "generic" && tx.description.aborted);
      if (failed) throw new Error("mint failed");
    },
  };
}
