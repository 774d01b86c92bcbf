import { type ChildProcess, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { createServer } from "node:net";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { testBundles } from "../integration.ts";
import { REPO_ROOT } from "../wrangler-config.ts";
import { CHAOS_VARS, type CaseOptions } from "./cases.ts";
import { merchantWithEndpoints } from "./load.ts";
import { startReceiver } from "./receiver.ts";
import { type ReportRow, rowOf } from "./report.ts";
import { runLoad } from "./scenario.ts";
import { awaitDelivered, verify } from "./verify.ts";

/** The target: every committed event delivered within this of the restart. */
export const RESTART_TARGET_MS = 30_000;

const freePort = () =>
  new Promise<number>((done, fail) => {
    const server = createServer();
    server.on("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });

/** The stack in a process group of its own (bun and its workerd), so one SIGKILL takes all of it. */
async function spawnStack(config: object): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["workers/local/chaos/stack-process.ts"], {
    cwd: REPO_ROOT,
    detached: true,
    env: { ...process.env, CHAOS_STACK: JSON.stringify(config) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((ready, fail) => {
    const timer = setTimeout(() => fail(new Error("the stack did not start within 60 s")), 60_000);
    createInterface(child.stdout!).on("line", (line) => {
      if (line.startsWith("READY ")) {
        clearTimeout(timer);
        ready();
      }
    });
    child.once("exit", (code) => fail(new Error(`the stack exited with ${code}`)));
  });
  return child;
}

const killGroup = (child: ChildProcess, signal: NodeJS.Signals = "SIGKILL") => {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    /* already gone */
  }
};

/**
 * The whole stack SIGKILLed `killAfterMs` into the load (loans, repayments,
 * webhooks), then started again at once on the same data and ports, the
 * clients retrying with the same idempotency keys. Delays are counted from
 * the restart: every committed event must arrive within 30 s of it.
 */
export async function sigkillCase(options: CaseOptions & { killAfterMs: number }): Promise<ReportRow> {
  // The same bundles as this process's test stacks (built once, removed on exit).
  const outDir = await testBundles();
  const persistDir = `dist/.chaos-data-${process.pid}-${options.killAfterMs}`;
  rmSync(resolve(REPO_ROOT, persistDir), { recursive: true, force: true });
  const config = { port: await freePort(), embedPort: await freePort(), persistDir, outDir, cronIntervalMs: 1_000, vars: CHAOS_VARS };
  const receiver = await startReceiver();
  let child = await spawnStack(config);
  try {
    const m = await merchantWithEndpoints(`http://127.0.0.1:${config.port}`, [receiver.endpoint("/ok", { kind: "ok" })]);
    const started = Date.now();
    const load = runLoad(m, options.load);
    await Bun.sleep(options.killAfterMs);
    killGroup(child);
    const deliveredBeforeKill = receiver.delivered("/ok").size;
    child = await spawnStack(config);
    const restartedAt = Date.now();
    const result = await load;
    const loadMs = Date.now() - started;
    const inTime = await awaitDelivered(m, receiver, ["/ok"], 90_000);
    const findings = await verify(m, receiver, { loans: result.ids, repaid: result.repaid, deliveredTo: ["/ok"] });
    const row = rowOf(
      `SIGKILL of the stack at ${(options.killAfterMs / 1000).toFixed(1)} s, restart`,
      `${options.load.loans} loans by ${options.load.clients} clients, ${result.repaid.size} repaid, ${findings.eventsCommitted} events`,
      findings,
      (e) => Math.max(Date.parse(e.createdAt), restartedAt),
      `${deliveredBeforeKill} events delivered before the kill; load took ${(loadMs / 1000).toFixed(1)} s`,
    );
    if (!inTime || row.maxMs > RESTART_TARGET_MS) row.ok = false;
    return row;
  } finally {
    killGroup(child, "SIGTERM");
    await Bun.sleep(500);
    killGroup(child);
    await receiver.close();
    rmSync(resolve(REPO_ROOT, persistDir), { recursive: true, force: true });
  }
}
