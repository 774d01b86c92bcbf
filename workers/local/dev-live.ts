import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { ANVIL_KEYS, deployRehearsalContracts, startAnvil } from "../../shared/chains/evm/testing/anvil.ts";
import { REPO_ROOT } from "./wrangler-config.ts";

/**
 * `npm run dev:live` (DECISIONS.md "Local live rehearsal"): the local stack of
 * `npm run dev` plus Anvil (from npm; offline) as POLYGON (chain id 137) on
 * 127.0.0.1:8545 and BASE (8453) on 127.0.0.1:8546, each with a test USDC
 * (6 decimals, open `mint`) and the SvcPool contract deployed, and the
 * POLYGON and BASE adapters pointed at them. TON is reported as not
 * configured (its emulator runs inside the tests, not as a node).
 *
 * Env as `npm run dev`, plus POLYGON_ANVIL_PORT (8545), BASE_ANVIL_PORT
 * (8546), REHEARSAL_CONFIRMATIONS (1) and REHEARSAL_BLOCK_SECONDS (12); data
 * (D1 and both chains) in DATA_DIR (default `.data-live`, apart from the
 * sandbox-only `.data`).
 *
 * Anvil mines a block per transaction; a quiet rehearsal chain would then stand
 * still, and a live loan is judged overdue only as far as its chain has been
 * read (the block time of the listener's cursor block). So each node also gets
 * an empty block whenever none came for REHEARSAL_BLOCK_SECONDS, as a real
 * chain keeps producing them.
 */
const dataDir = process.env.DATA_DIR ?? ".data-live";
mkdirSync(resolve(REPO_ROOT, dataDir), { recursive: true });
const confirmations = process.env.REHEARSAL_CONFIRMATIONS ?? "1";
const blockSeconds = Number(process.env.REHEARSAL_BLOCK_SECONDS ?? 12);

const chains = [
  { chain: "POLYGON", chainId: 137, port: Number(process.env.POLYGON_ANVIL_PORT ?? 8545) },
  { chain: "BASE", chainId: 8453, port: Number(process.env.BASE_ANVIL_PORT ?? 8546) },
] as const;

const nodes = await Promise.all(
  chains.map(async (c) => {
    const node = await startAnvil({ chainId: c.chainId, port: c.port, statePath: resolve(REPO_ROOT, dataDir, `anvil-${c.chain.toLowerCase()}.json`) });
    const deployment = await deployRehearsalContracts(node);
    process.env[`${c.chain}_RPC_URL`] = node.rpcUrl;
    process.env[`${c.chain}_TOKEN_ADDRESS`] = deployment.usdc;
    process.env[`${c.chain}_POOL_ADDRESS`] = deployment.pool;
    process.env[`${c.chain}_CONFIRMATIONS`] = confirmations;
    return { ...c, node, deployment };
  }),
);
process.env.DATA_DIR = dataDir;

// An empty block on each quiet chain every blockSeconds (transactions are still mined at once).
if (blockSeconds > 0) {
  setInterval(() => {
    for (const { node } of nodes) {
      node.public
        .getBlock()
        .then((head) => (Date.now() / 1000 - Number(head.timestamp) >= blockSeconds ? node.test.mine({ blocks: 1 }) : undefined))
        .catch(() => {});
    }
  }, blockSeconds * 1000);
}

console.log(`
Local live rehearsal: Anvil (real EVM nodes, offline; test funds only)
${nodes.map((n) => `  ${n.chain.padEnd(7)} chain id ${n.chainId}  ${n.node.rpcUrl}  USDC ${n.deployment.usdc}  pool ${n.deployment.pool}`).join("\n")}
  TON      not configured (the TON emulator runs inside the tests)
  Funded test accounts (Anvil's well-known dev keys, never for real funds): ${ANVIL_KEYS.slice(1, 3).join(", ")} …
  Test USDC for a wallet: bun workers/local/rehearsal-mint.ts POLYGON <address> <amount, e.g. 1000.00>
`);

// The stack itself, exactly as `npm run dev` starts it, with the live chains above configured.
await import("./dev.ts");
