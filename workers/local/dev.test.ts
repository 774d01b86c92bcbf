import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";

/**
 * `npm run dev` itself: the script starts the whole stack, prints the two
 * URLs, answers /v1/health, and keeps its D1 (migrated on start) across
 * restarts.
 */
const procs: Subprocess[] = [];
afterEach(async () => {
  for (const p of procs.splice(0)) {
    p.kill("SIGINT");
    await p.exited;
  }
});

async function startDev(dataDir: string): Promise<{ baseUrl: string; embedUrl: string; operatorKey: string; proc: Subprocess }> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: "0",
    EMBED_PORT: "0",
    DATA_DIR: dataDir,
    CRON_INTERVAL_SECONDS: "0",
    LOG_LEVEL: "warn",
  };
  // The development default applies only when OPERATOR_KEY is unset.
  delete env.OPERATOR_KEY;
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "dev.ts")], {
    env,
    stdout: "pipe",
    stderr: "pipe",
  });
  procs.push(proc);
  const reader = proc.stdout.getReader();
  let out = "";
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    out += new TextDecoder().decode(value);
    const base = /\{base_url\}\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(out);
    const embed = /\{embed_url\}\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(out);
    const operator = /x-operator-key: (\S+?)"/.exec(out);
    if (base && embed && operator && out.includes("Credentials:")) {
      reader.releaseLock();
      return { baseUrl: base[1]!, embedUrl: embed[1]!, operatorKey: operator[1]!, proc };
    }
  }
  throw new Error(`dev did not print its URLs:\n${out}\n${await new Response(proc.stderr).text()}`);
}

async function stop(proc: Subprocess) {
  proc.kill("SIGINT");
  await proc.exited;
  procs.splice(procs.indexOf(proc), 1);
}

test("npm run dev serves both URLs and persists its database across restarts", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "svc-dev-"));
  try {
    const first = await startDev(dataDir);
    const health = await fetch(`${first.baseUrl}/v1/health`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as { status: string }).status).toBe("ok");
    expect((await fetch(`${first.embedUrl}/health`)).status).toBe(200);
    const email = `dev.${Date.now()}@merchant.example`;
    const signup = await fetch(`${first.baseUrl}/v1/auth/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password: "correct horse battery", companyName: "Dev Co" }),
    });
    expect(signup.status).toBe(201);
    // The printed operator key is the development default, and the api worker accepts it.
    expect(first.operatorKey).toBe("svc_operator_dev");
    const tenants = await fetch(`${first.baseUrl}/v1/operator/tenants`, { headers: { "x-operator-key": first.operatorKey } });
    expect(tenants.status).toBe(200);
    expect(((await tenants.json()) as { data: { name: string }[] }).data.map((x) => x.name)).toContain("Dev Co");
    expect((await fetch(`${first.baseUrl}/v1/operator/tenants`, { headers: { "x-operator-key": "svc_operator_wrong" } })).status).toBe(401);
    await stop(first.proc);

    const second = await startDev(dataDir);
    const login = await fetch(`${second.baseUrl}/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password: "correct horse battery" }),
    });
    expect(login.status).toBe(200);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 120_000);
