import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";

/**
 * `npm run dev:live` itself (DECISIONS.md "Local live rehearsal"): Anvil as
 * POLYGON (137) and BASE (8453), the rehearsal contracts deployed, and the
 * stack answering `GET /v1/chains` with the pool addresses that have code on
 * those nodes. Free ports instead of 8545/8546 so it runs beside anything.
 */
let proc: Subprocess | null = null;
const dataDir = mkdtempSync(join(tmpdir(), "svc-dev-live-"));
afterAll(async () => {
  if (proc) {
    proc.kill("SIGINT");
    await proc.exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
});

const freePort = () =>
  new Promise<number>((resolvePort) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });

const rpc = async (url: string, method: string, params: unknown[]) => {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return ((await res.json()) as { result: string }).result;
};

test("npm run dev:live: Anvil as POLYGON 137 and BASE 8453, GET /v1/chains names pools that have code there, and a quiet chain keeps producing blocks", async () => {
  const [polygonPort, basePort] = [await freePort(), await freePort()];
  const child = Bun.spawn([process.execPath, join(import.meta.dir, "dev-live.ts")], {
    env: {
      ...process.env,
      PORT: "0",
      EMBED_PORT: "0",
      DATA_DIR: dataDir,
      CRON_INTERVAL_SECONDS: "0",
      LOG_LEVEL: "warn",
      POLYGON_ANVIL_PORT: String(polygonPort),
      BASE_ANVIL_PORT: String(basePort),
      REHEARSAL_BLOCK_SECONDS: "1",
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  proc = child;
  const reader = child.stdout.getReader();
  let out = "";
  let base: string | null = null;
  const deadline = Date.now() + 90_000;
  while (!base && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    out += new TextDecoder().decode(value);
    if (out.includes("Credentials:")) base = /\{base_url\}\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1] ?? null;
  }
  reader.releaseLock();
  if (!base) throw new Error(`dev:live did not start:\n${out}\n${await new Response(child.stderr).text()}`);
  expect(out).toContain(`http://127.0.0.1:${polygonPort}`);
  expect(out).toContain("TON      not configured");

  const chains = (await (await fetch(`${base}/v1/chains`)).json()) as { data: Record<string, unknown>[] };
  const byChain = Object.fromEntries(chains.data.map((c) => [c.chain as string, c]));
  expect(byChain.POLYGON).toMatchObject({ chainId: 137, live: true, configured: true, confirmations: 1 });
  expect(byChain.BASE).toMatchObject({ chainId: 8453, live: true, configured: true });
  expect(byChain.TON).toMatchObject({ configured: false });
  for (const [chain, port, chainId] of [
    ["POLYGON", polygonPort, 137],
    ["BASE", basePort, 8453],
  ] as const) {
    const url = `http://127.0.0.1:${port}`;
    expect(Number(await rpc(url, "eth_chainId", []))).toBe(chainId);
    const pool = byChain[chain]!.poolAddress as string;
    expect(pool).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect((await rpc(url, "eth_getCode", [pool, "latest"])).length).toBeGreaterThan(100);
    expect((await rpc(url, "eth_getCode", [byChain[chain]!.tokenAddress, "latest"])).length).toBeGreaterThan(100);
  }
  // A quiet chain keeps producing blocks (a live loan is judged only as far as its chain has been read).
  const height = async () => Number(await rpc(`http://127.0.0.1:${polygonPort}`, "eth_blockNumber", []));
  const before = await height();
  await Bun.sleep(3_500);
  expect(await height()).toBeGreaterThanOrEqual(before + 2);
}, 120_000);
