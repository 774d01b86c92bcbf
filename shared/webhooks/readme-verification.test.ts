import { afterAll, afterEach, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import { mkdir } from "node:fs/promises";
import { eq } from "drizzle-orm";
import { events } from "../../db/schema/events.ts";
import { webhookDeliveries } from "../../db/schema/webhooks.ts";
import { DEV_SECRETS_KEY } from "../crypto/secret-box.ts";
import { newId } from "../domain/ids.ts";
import type { FetchLike } from "../http/fetch-like.ts";
import { consoleLogger } from "../observability/logger.ts";
import { createKey, signUpTenant } from "../testing/fixtures.ts";
import { createTestApp, type TestApp } from "../testing/harness.ts";
import { ARTIFACTS } from "../testing/openapi-typescript.ts";
import { readmeCode } from "../testing/readme-code.ts";
import { processDeliveryMessage, type DeliveryDeps } from "./deliver.ts";
import type { memoryDeliveryQueue } from "./memory-queue.ts";
import { itemsOf } from "./messages.ts";

/**
 * README "Webhooks, notifications and e-mail" (issue 11): the two receivers
 * it shows, run as they stand (extracted from README.md by their markers),
 * behind endpoints registered with POST /v1/webhooks and fed by the real
 * delivery path (shared/webhooks/deliver.ts), whose fetch hands each request
 * to the receiver as an HTTP server would.
 */
type Handler = (request: Request) => Promise<Response>;
type Receiver = { webhookHandler: (secret: string, onEvent: (event: unknown) => Promise<void> | void) => Handler };
type Delivered = { url: string; body: string; headers: Record<string, string>; status: number };

const RECEIVERS = {
  standard: { marker: "verify-standardwebhooks", url: "https://hooks.merchant.example/standardwebhooks" },
  node: { marker: "verify-node-crypto", url: "https://hooks.merchant.example/node-crypto" },
} as const;
type Kind = keyof typeof RECEIVERS;

let t: TestApp;
let tenantId: string;
const secrets = {} as Record<Kind, string>;
const handlers = {} as Record<Kind, Handler>;
const verified: Record<Kind, unknown[]> = { standard: [], node: [] };
const delivered: Delivered[] = [];

beforeAll(async () => {
  t = await createTestApp();
  const owner = await signUpTenant(t);
  tenantId = owner.tenantId;
  const { key } = await createKey(t, owner.token);
  const dir = `${ARTIFACTS}webhook-verification/`;
  await mkdir(dir, { recursive: true });
  for (const kind of Object.keys(RECEIVERS) as Kind[]) {
    const { marker, url } = RECEIVERS[kind];
    const created = await t.request("POST", "/v1/webhooks", { body: { url, events: ["*"] }, headers: { "x-api-key": key } });
    expect(created.status).toBe(201);
    secrets[kind] = created.body.secret;
    // A fresh file name per run: the module loader caches by path.
    const file = `${dir}${kind}-${newId()}.mjs`;
    await Bun.write(file, await readmeCode(marker));
    const receiver: Receiver = await import(file);
    handlers[kind] = receiver.webhookHandler(secrets[kind], (event) => void verified[kind].push(event));
  }

  // Deliveries of one loan's events (submitted, decision, funded) to both endpoints.
  const queue = t.deps.queue as ReturnType<typeof memoryDeliveryQueue>;
  queue.messages.length = 0;
  const fetch: FetchLike = async (url, init) => {
    const kind = (Object.keys(RECEIVERS) as Kind[]).find((k) => RECEIVERS[k].url === url);
    if (!kind) throw new Error(`unexpected url ${url}`);
    const res = await handlers[kind](new Request(url, init));
    delivered.push({ url, body: String(init.body), headers: { ...(init.headers as Record<string, string>) }, status: res.status });
    return res;
  };
  const deps: DeliveryDeps = {
    db: t.db,
    queue,
    clock: t.clock,
    fetch,
    secretsKey: DEV_SECRETS_KEY,
    timeoutMs: 5_000,
    retryDelaysSeconds: [30, 120],
    log: consoleLogger,
  };
  const me = await t.request("GET", "/v1/me", { headers: { "x-api-key": key } });
  const loan = await t.request("POST", "/v1/loans", {
    body: {
      loanProductId: me.body.merchantConfigs[0].loanProductId,
      borrowerRef: "user-42",
      borrowerWalletAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
      chain: "POLYGON_AMOY",
      principalAmount: "100.00",
      idempotencyKey: newId(),
    },
    headers: { "x-api-key": key },
  });
  expect(loan.status).toBe(201);
  while (queue.messages.length > 0) {
    const { body } = queue.messages.shift()!;
    for (const item of itemsOf(body)) if (item.kind === "delivery") await processDeliveryMessage(deps, item);
  }
});
afterEach(() => setSystemTime());
afterAll(() => t.close());

/** A delivery as it reached `kind`'s receiver, to send again, changed or not. */
function captured(kind: Kind, type = "loan.funded"): Delivered {
  const d = delivered.find((r) => r.url === RECEIVERS[kind].url && r.headers["x-svc-event"] === type);
  if (!d) throw new Error(`no ${type} delivered to ${kind}`);
  return { ...d, headers: { ...d.headers } };
}

async function send(kind: Kind, d: Delivered): Promise<number> {
  const before = verified[kind].length;
  const res = await handlers[kind](new Request(RECEIVERS[kind].url, { method: "POST", headers: d.headers, body: d.body }));
  // A refused request never reaches the merchant's processing.
  if (res.status === 401) expect(verified[kind].length).toBe(before);
  return res.status;
}

/** Changes one character of a signature, keeping its length and alphabet. */
const flip = (s: string) => s.slice(0, -2) + (s.at(-2) === "a" ? "b" : "a") + s.at(-1);

describe.each(Object.keys(RECEIVERS) as Kind[])("the README's %s receiver", (kind) => {
  test("accepts every real delivery; what it verified is exactly each event's envelope", async () => {
    expect(secrets[kind]).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const mine = delivered.filter((d) => d.url === RECEIVERS[kind].url);
    expect(mine.map((d) => [d.headers["x-svc-event"], d.status])).toEqual([
      ["loan.application_submitted", 204],
      ["loan.decision", 204],
      ["loan.funded", 204],
    ]);
    const outbox = await t.db.select({ envelope: events.envelope }).from(events).where(eq(events.tenantId, tenantId));
    const envelopes = new Map(outbox.map((e) => [e.envelope.id, e.envelope]));
    expect(verified[kind]).toHaveLength(3);
    for (const event of verified[kind] as { id: string }[]) expect(event).toEqual(envelopes.get(event.id)!);
    const rows = await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.tenantId, tenantId));
    expect(rows.map((r) => r.status)).toEqual(Array(6).fill("SUCCEEDED"));
  });

  test("the same request again within the tolerance is accepted (deduplicating on id is the receiver's part)", async () => {
    setSystemTime(new Date(Date.now() + 60_000));
    expect(await send(kind, captured(kind))).toBe(204);
  });

  test("a tampered body: 401", async () => {
    const d = captured(kind);
    const body = d.body.replace('"principalAmount":"100.00"', '"principalAmount":"900.00"');
    expect(body).not.toBe(d.body);
    expect(await send(kind, { ...d, body })).toBe(401);
  });

  test("a tampered or truncated signature: 401", async () => {
    const header = kind === "standard" ? "webhook-signature" : "x-svc-signature";
    const d = captured(kind);
    expect(await send(kind, { ...d, headers: { ...d.headers, [header]: flip(d.headers[header]!) } })).toBe(401);
    expect(await send(kind, { ...d, headers: { ...d.headers, [header]: d.headers[header]!.slice(0, -4) } })).toBe(401);
    const { [header]: _, ...without } = d.headers;
    expect(await send(kind, { ...d, headers: without })).toBe(401);
  });

  test("a replay 10 minutes later, outside the 5-minute tolerance: 401", async () => {
    const d = captured(kind);
    setSystemTime(new Date(Date.now() + 10 * 60_000));
    expect(await send(kind, d)).toBe(401);
  });

  test("a timestamp 10 minutes ahead of the receiver's clock: 401", async () => {
    const d = captured(kind);
    setSystemTime(new Date(Date.now() - 10 * 60_000));
    expect(await send(kind, d)).toBe(401);
  });
});

test("a replay with a rewritten webhook-timestamp: refused by webhook-signature; x-svc-signature does not cover the header (README: deduplicate on id)", async () => {
  setSystemTime(new Date(Date.now() + 10 * 60_000));
  const fresh = String(Math.floor(Date.now() / 1000));
  const standard = captured("standard");
  expect(await send("standard", { ...standard, headers: { ...standard.headers, "webhook-timestamp": fresh } })).toBe(401);
  const node = captured("node");
  expect(await send("node", { ...node, headers: { ...node.headers, "webhook-timestamp": fresh } })).toBe(204);
});
