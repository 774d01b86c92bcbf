import { existsSync, readdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { buildWorkers } from "./build.ts";
import { isAlive } from "./process-alive.ts";
import { startStack, type StackOptions } from "./stack.ts";
import { REPO_ROOT } from "./wrangler-config.ts";

/**
 * The one helper of the miniflare tier (tier 3): the bundled workers together
 * in workerd, driven over real HTTP. Cloudflare does not support Miniflare on
 * Bun officially, so every miniflare-tier test goes through here and nothing
 * else imports Miniflare.
 */
export type StackRequest = {
  /** Default: GET without a body, POST with one. */
  method?: string;
  /** Sent as the JSON body, with `content-type: application/json`. */
  json?: unknown;
  /** A raw body (for malformed-body tests); ignored when `json` is set. */
  body?: BodyInit;
  headers?: Record<string, string>;
};

export type StackResponse<T = any> = {
  status: number;
  headers: Headers;
  /** Parsed JSON when the response says JSON, else the text ("" for no body). */
  body: T;
};

export type TestStack = {
  baseUrl: string;
  embedUrl: string;
  /**
   * A request to `{base_url}` + `path` (or to `path` itself when it is an
   * absolute URL, e.g. `${stack.embedUrl}/health`).
   */
  fetch<T = any>(path: string, init?: StackRequest): Promise<StackResponse<T>>;
  /**
   * Fires the cron worker's `scheduled()` (default cron: the first in its
   * wrangler.toml) and waits until the jobs it dispatched have run once;
   * `jobs`: those runs, continuations included.
   */
  scheduled(cron?: string): Promise<{ outcome: string; noRetry: boolean; jobs?: string[] }>;
  /** The shared D1 database, for assertions that HTTP cannot make. */
  db(): Promise<D1Database>;
  /** A producer of the api worker's queue binding (e.g. `WEBHOOK_DELIVERIES`), to send messages as the workers do. */
  queue<Body = unknown>(binding: string): Promise<Queue<Body>>;
  dispose(): Promise<void>;
};

/**
 * Starts an in-memory stack on free ports (or on `embedPort` for the embed
 * worker, e.g. to name it in `EMBED_HOST` as workers/local/dev.ts does), cron
 * off (fire it with `scheduled()`), the bundles built once per process.
 *
 * @example
 * let stack: TestStack;
 * beforeAll(async () => { stack = await startTestStack(); });
 * afterAll(() => stack.dispose());
 * test("signup", async () => {
 *   const res = await stack.fetch("/v1/auth/signup", { method: "POST", json: { email, password, companyName } });
 *   expect(res.status).toBe(201);
 * });
 */
let bundlesDir: string | null = null;

/**
 * This process's own bundle directory (`dist/.test-<pid>`, removed on exit):
 * test processes running side by side (or `npm run dev`, which builds into
 * `dist/`) never read bundles another one is rewriting.
 */
function testBundlesDir(): string {
  if (!bundlesDir) {
    bundlesDir = `dist/.test-${process.pid}`;
    const absolute = resolve(REPO_ROOT, bundlesDir);
    removeOrphanedBundles();
    process.once("exit", () => rmSync(absolute, { recursive: true, force: true }));
  }
  return bundlesDir;
}

/**
 * Removes the bundle directories of test processes that are gone: `exit` does not always run (a `bun test
 * --parallel` worker is ended, a run is interrupted), and each left behind holds 35 MB.
 */
export function removeOrphanedBundles(dist = resolve(REPO_ROOT, "dist")): string[] {
  const removed: string[] = [];
  const entries = existsSync(dist) ? readdirSync(dist) : [];
  for (const name of entries) {
    const pid = Number(/^\.test-(\d+)$/.exec(name)?.[1]);
    if (!pid || pid === process.pid || isAlive(pid)) continue;
    rmSync(join(dist, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

/**
 * Tests sign up many tenants from one address: the per-IP signup limit is
 * lifted unless a test sets it (as it does to test that limit).
 */
const TEST_RATELIMITS: NonNullable<StackOptions["ratelimits"]> = { SIGNUP_LIMITER: { limit: 1_000_000 } };

let bundlesBuilt: Promise<string> | undefined;

/** This process's test bundles, built once (for stacks started in another process, like the chaos suite's). */
export function testBundles(): Promise<string> {
  bundlesBuilt ??= buildWorkers(testBundlesDir()).then(() => testBundlesDir());
  return bundlesBuilt;
}

export async function startTestStack(
  options: Pick<StackOptions, "ratelimits" | "vars" | "logLevel" | "embedPort" | "cronIntervalMs" | "persistDir"> = {},
): Promise<TestStack> {
  const stack = await startStack({
    port: 0,
    embedPort: 0,
    cronIntervalMs: 0,
    logLevel: "error",
    outDir: testBundlesDir(),
    ...options,
    ratelimits: { ...TEST_RATELIMITS, ...options.ratelimits },
  });
  return {
    baseUrl: stack.baseUrl,
    embedUrl: stack.embedUrl,
    fetch: httpClient(stack.baseUrl),
    scheduled: stack.scheduled,
    // Getting a binding goes through the same proxy, so it is tried once more on a reset too.
    db: async () => retryingOnReset((await onceMoreOnReset(() => stack.mf.getD1Database("DB", stack.names.api))) as unknown as D1Database),
    queue: async (binding) => (await onceMoreOnReset(() => stack.mf.getQueueProducer(binding, stack.names.api))) as unknown as Queue<any>,
    dispose: stack.dispose,
  };
}

/** `TestStack.fetch` for a stack at `baseUrl` (one this process started, or another process's). */
export function httpClient(baseUrl: string): TestStack["fetch"] {
  return async (path, init = {}) => {
    const headers = new Headers(init.headers);
    let body = init.body;
    if (init.json !== undefined) {
      headers.set("content-type", "application/json");
      body = JSON.stringify(init.json);
    }
    const url = /^https?:\/\//.test(path) ? path : `${baseUrl}${path}`;
    // A fresh connection per request: Bun's keep-alive pool can hand a POST a socket workerd is closing,
    // which fails with ECONNRESET before the request is sent (seen under the 500-loan load test).
    const res = await fetch(url, { method: init.method ?? (body === undefined ? "GET" : "POST"), headers, body, keepalive: false });
    const text = await res.text();
    const isJson = /\bjson\b/.test(res.headers.get("content-type") ?? "") && text !== "";
    return { status: res.status, headers: res.headers, body: isJson ? JSON.parse(text) : text };
  };
}

let merchants = 0;

/** The token of the newest verification link in the owner's mailbox (`GET /v1/dev/mailbox`), or null. */
export async function verificationToken(stack: Pick<TestStack, "fetch">, ownerToken: string): Promise<string | null> {
  const mails = await stack.fetch("/v1/dev/mailbox?limit=100", { headers: { authorization: `Bearer ${ownerToken}` } });
  if (mails.status !== 200) throw new Error(`mailbox: ${mails.status} ${JSON.stringify(mails.body)}`);
  for (const m of mails.body.data as { body: string }[]) {
    const token = /\/v1\/auth\/verify-email\?token=([0-9A-Za-z]+)/.exec(m.body)?.[1];
    if (token) return token;
  }
  return null;
}

/**
 * Signup → API key → /v1/me on a running stack: a sandbox tenant with its
 * owner's session, its API key, request helpers for both, its first loan
 * product and embed key. The owner's e-mail is verified through the link in
 * the mailbox (so notification e-mail is sent), unless `verifyEmail: false`.
 * Throws when a step does not answer as it should.
 */
export async function signUpMerchant(stack: Pick<TestStack, "fetch">, companyName = "Lender", options: { verifyEmail?: boolean } = {}) {
  const n = ++merchants;
  const email = `owner.${Date.now()}.${n}@merchant.example`;
  const signup = await stack.fetch("/v1/auth/signup", { json: { email, password: "correct horse battery staple", companyName: `${companyName} ${n}` } });
  if (signup.status !== 201) throw new Error(`signup: ${signup.status} ${JSON.stringify(signup.body)}`);
  const token = signup.body.accessToken as string;
  if (options.verifyEmail ?? true) {
    const verified = await stack.fetch("/v1/auth/verify-email", { json: { token: await verificationToken(stack, token) } });
    if (verified.status !== 200) throw new Error(`verify e-mail: ${verified.status} ${JSON.stringify(verified.body)}`);
  }
  const key = await stack.fetch("/v1/api-keys", { json: { name: "backend" }, headers: { authorization: `Bearer ${token}` } });
  if (key.status !== 201) throw new Error(`api key: ${key.status} ${JSON.stringify(key.body)}`);
  const apiKey = key.body.key as string;
  const api = <T = any>(path: string, init: StackRequest = {}): Promise<StackResponse<T>> =>
    stack.fetch<T>(path, { ...init, headers: { "x-api-key": apiKey, ...init.headers } });
  const dashboard = <T = any>(path: string, init: StackRequest = {}, bearer = token): Promise<StackResponse<T>> =>
    stack.fetch<T>(path, { ...init, headers: { authorization: `Bearer ${bearer}`, ...init.headers } });
  const me = await api("/v1/me");
  if (me.status !== 200) throw new Error(`me: ${me.status}`);
  return {
    tenantId: signup.body.tenant.id as string,
    ownerUserId: signup.body.user.id as string,
    email,
    token,
    apiKey,
    api,
    dashboard,
    loanProductId: me.body.merchantConfigs[0].loanProductId as string,
    embedKey: me.body.widgetPrograms[0].embedKey as string,
  };
}

/** `call`, and once more if it failed with ECONNRESET (Miniflare's proxy through Bun's keep-alive pool, below). */
export async function onceMoreOnReset<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (!String(err).includes("ECONNRESET")) throw err;
    return call();
  }
}

/**
 * The test's D1 (Miniflare's proxy of the binding), with each call tried
 * once more when it fails with ECONNRESET: the proxy's requests go through
 * Bun's keep-alive pool, which can hand one a socket workerd is closing (the
 * same fault `httpClient` avoids with a fresh connection per request; seen
 * once in CI under the 250-loan webhook load). A write tried twice fails
 * loudly on its keys rather than silently.
 */
export function retryingOnReset(db: D1Database): D1Database {
  const once = onceMoreOnReset;
  // The proxy's own statements, for `batch` (Miniflare recognizes only those).
  const originals = new WeakMap<object, D1PreparedStatement>();
  const statement = (s: D1PreparedStatement): D1PreparedStatement => {
    const wrapped = new Proxy(s, {
      get(target, prop) {
        const value = Reflect.get(target, prop);
        if (typeof value !== "function") return value;
        if (prop === "bind") return (...args: unknown[]) => statement(value.apply(target, args));
        if (prop === "first" || prop === "all" || prop === "run" || prop === "raw") return (...args: unknown[]) => once(() => value.apply(target, args));
        return value.bind(target);
      },
    });
    originals.set(wrapped, s);
    return wrapped;
  };
  return new Proxy(db, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (typeof value !== "function") return value;
      if (prop === "prepare") return (query: string) => statement(value.call(target, query));
      if (prop === "batch")
        return (statements: D1PreparedStatement[]) =>
          once(() =>
            value.call(
              target,
              statements.map((s) => originals.get(s) ?? s),
            ),
          );
      if (prop === "exec") return (query: string) => once(() => value.call(target, query));
      return value.bind(target);
    },
  });
}
