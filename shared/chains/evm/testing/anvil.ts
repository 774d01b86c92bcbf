/**
 * Anvil, the real EVM JSON-RPC node of Foundry, from npm
 * (`@foundry-rs/anvil-linux-amd64`, the binary package of `@foundry-rs/anvil`;
 * it runs offline), for the tests against a live-shaped chain and for
 * `npm run dev:live`. Also deploys the rehearsal contracts on it: a test USDC
 * (6 decimals, open `mint`) and SvcPool, both compiled from the repository's
 * sources by solc.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import {
  type Account,
  type Address,
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  getContractAddress,
  type Hash,
  type Hex,
  http,
  type PublicClient,
  type TestClient,
  type WalletClient,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { compileContract, type CompiledContract } from "../compile-contract.ts";
import { compilePool } from "../compile-pool.ts";

/** Anvil's default dev accounts (mnemonic "test test … junk"): #0 deploys, the rest are handy funded wallets. Public keys: never for anything real. */
export const ANVIL_KEYS: readonly Hex[] = [
  "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
  "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
];

export type AnvilNode = {
  chainId: number;
  rpcUrl: string;
  port: number;
  public: PublicClient;
  /** Anvil's own methods: mine, snapshot/revert, reorg, setBalance, impersonation. */
  test: TestClient;
  /** A wallet client signing with `account` on this node. */
  wallet(account: Account): WalletClient;
  stop(): Promise<void>;
};

/** The Anvil binary of this platform, from npm; a clear error where npm has none for it. */
export function anvilBinary(): string {
  const require = createRequire(import.meta.url);
  const arch = process.arch === "x64" ? "amd64" : process.arch;
  const pkg = `@foundry-rs/anvil-${process.platform}-${arch}`;
  try {
    const bin = join(dirname(require.resolve(`${pkg}/package.json`)), "bin", process.platform === "win32" ? "anvil.exe" : "anvil");
    if (existsSync(bin)) return bin;
  } catch {
    // not installed: reported below
  }
  throw new Error(`Anvil is not installed for ${process.platform}/${process.arch}: npm install -O ${pkg} (linux x64 is in package.json)`);
}

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

async function waitForRpc(rpcUrl: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`anvil exited with ${child.exitCode}`);
    try {
      const res = await fetch(rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`anvil did not answer on ${rpcUrl} within ${timeoutMs} ms`);
}

/**
 * Starts Anvil as chain `chainId` on `port` (a free one when 0), mining a
 * block per transaction (or every `blockTimeSeconds`), and waits until it
 * answers JSON-RPC.
 *
 * @example const node = await startAnvil({ chainId: 137 }); … await node.stop();
 */
export async function startAnvil(options: {
  chainId: number;
  port?: number;
  blockTimeSeconds?: number;
  quiet?: boolean;
  /** Keep the chain in this file across runs (loaded on start, written every few seconds). */
  statePath?: string;
}): Promise<AnvilNode> {
  const port = options.port || (await freePort());
  const args = ["--chain-id", String(options.chainId), "--port", String(port), "--host", "127.0.0.1", "--silent"];
  if (options.blockTimeSeconds) args.push("--block-time", String(options.blockTimeSeconds));
  if (options.statePath) args.push("--state", options.statePath, "--state-interval", "2");
  const child = spawn(anvilBinary(), args, { stdio: options.quiet === false ? "inherit" : "ignore" });
  const rpcUrl = `http://127.0.0.1:${port}`;
  const stopChild = () => child.exitCode === null && child.kill("SIGKILL");
  process.once("exit", stopChild);
  await waitForRpc(rpcUrl, child, 15_000);
  const chain = defineChain({
    id: options.chainId,
    name: `anvil-${options.chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const transport = http(rpcUrl, { retryCount: 0 });
  return {
    chainId: options.chainId,
    rpcUrl,
    port,
    public: createPublicClient({ chain, transport }) as PublicClient,
    test: createTestClient({ chain, mode: "anvil", transport }) as unknown as TestClient,
    wallet: (account) => createWalletClient({ account, chain, transport }),
    async stop() {
      process.removeListener("exit", stopChild);
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 2_000))]);
      stopChild();
    },
  };
}

let compiled: { usdc: CompiledContract; pool: CompiledContract } | null = null;

/** TestUSDC and SvcPool, compiled once per process. */
export function rehearsalContracts() {
  compiled ??= { usdc: compileContract(join(import.meta.dir, "TestUSDC.sol"), "TestUSDC"), pool: compilePool() };
  return compiled;
}

export type RehearsalDeployment = { usdc: Address; pool: Address; deployer: Address };

/**
 * Deploys the rehearsal's test USDC and the SvcPool on `node` from Anvil's
 * account #0 (`operator` defaults to it; live funding never goes through the
 * pool, so its operator functions stay unused there).
 */
export async function deployRehearsalContracts(node: AnvilNode, options: { operator?: Address } = {}): Promise<RehearsalDeployment> {
  const deployer = privateKeyToAccount(ANVIL_KEYS[0]!);
  // A chain kept from an earlier run already has them: account #0's first two deployments, at fixed addresses.
  const [usdcAt, poolAt] = [getContractAddress({ from: deployer.address, nonce: 0n }), getContractAddress({ from: deployer.address, nonce: 1n })];
  if ((await node.public.getCode({ address: poolAt }))?.length && (await node.public.getCode({ address: usdcAt }))?.length) {
    return { usdc: usdcAt, pool: poolAt, deployer: deployer.address };
  }
  const wallet = node.wallet(deployer);
  const { usdc, pool } = rehearsalContracts();
  const deploy = async (contract: CompiledContract, args: unknown[]): Promise<Address> => {
    const hash = await wallet.deployContract({ abi: contract.abi, bytecode: contract.bytecode, args, account: deployer, chain: wallet.chain });
    const receipt = await node.public.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    if (receipt.status !== "success" || !receipt.contractAddress) throw new Error(`deploy failed: ${hash}`);
    return receipt.contractAddress;
  };
  const usdcAddress = await deploy(usdc, ["USD Coin (rehearsal)", "USDC"]);
  const poolAddress = await deploy(pool, [usdcAddress, options.operator ?? deployer.address]);
  return { usdc: usdcAddress, pool: poolAddress, deployer: deployer.address };
}

/** Mints rehearsal USDC (base units) to `to`, from account #0 (the mint is open). */
export async function mintUsdc(node: AnvilNode, deployment: RehearsalDeployment, to: Address, amount: bigint): Promise<void> {
  const account = privateKeyToAccount(ANVIL_KEYS[0]!);
  const wallet = node.wallet(account);
  const hash = await wallet.writeContract({
    address: deployment.usdc,
    abi: rehearsalContracts().usdc.abi,
    functionName: "mint",
    args: [to, amount],
    account,
    chain: wallet.chain,
  });
  await node.public.waitForTransactionReceipt({ hash, pollingInterval: 20 });
}

/**
 * The transaction of `hash` that a test just saw broadcast, asked again until
 * the node knows it (for up to 5 s). Anvil automines in the background: a
 * transaction between its pool and its stored block may briefly be "not
 * found", the likeliest reading of one CI failure in which the node did not
 * know a transaction the api had just broadcast.
 */
export async function broadcastTransaction(node: AnvilNode, hash: string) {
  for (let waited = 0; ; waited += 20) {
    const tx = await node.public.getTransaction({ hash: hash as Hash }).catch((error: unknown) => {
      if (waited >= 5_000) throw error;
      return null;
    });
    if (tx) return tx;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
