import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { Address, beginCell, storeStateInit, type StateInit } from "@ton/core";
import { sign, type KeyPair } from "@ton/crypto";
import { WalletContractV4, WalletContractV5R1 } from "@ton/ton";
import type { BrowserContext } from "playwright-core";

/**
 * A scripted TON Connect wallet for Playwright, the TON counterpart of
 * injected-wallet.ts: every frame of every page of a context (cross-origin
 * iframes included) gets a TON Connect JS bridge at `window.tonkeeper.tonconnect`,
 * the key under which @tonconnect/sdk's wallet list (its built-in fallback
 * list included) looks for Tonkeeper's browser extension. Each call runs here
 * in the test process against an ed25519 key pair, as the extension would in
 * its own process, and answers as the TON Connect protocol (ton-connect/docs,
 * bridge.md "JS bridge" and requests-responses.md) says:
 *
 * - `connect(protocolVersion, { manifestUrl, items })`: fetches the manifest
 *   (loopback URLs only: the test wallet never leaves the machine), then
 *   answers a `connect` event with a `ton_addr` item (raw address, network,
 *   public key in hex, the wallet's state init as a base64 BOC); `ton_proof`
 *   is answered with an item error. Connections are kept per frame origin.
 * - `restoreConnection()`: the same event for an origin already connected,
 *   else `connect_error` 100 (unknown app).
 * - `send({ method: "signData", params: [json], id })` with a `text` payload:
 *   `{ result: { signature, address, timestamp, domain, payload }, id }`,
 *   signed as a wallet signs (see `signDataTextDigest`), the domain being the
 *   requesting frame's host. `disconnect` forgets the origin; any other
 *   method is refused with error 400.
 * - `listen(callback)` and `disconnect()`.
 */
export type InjectedTonWalletOptions = {
  keyPair: KeyPair;
  version: "v4" | "v5r1";
  /** The network the wallet is on: "-3" testnet (default), "-239" mainnet. */
  network?: "-3" | "-239";
};

export type TonWalletCall = {
  /** "connect", "restoreConnection", "disconnect", or the method of a `send` ("signData", …). */
  method: string;
  params: unknown;
  /** The origin of the frame that made the request, e.g. the widget's. */
  origin: string;
  /** What the page got back. */
  reply: unknown;
};

export type InjectedTonWallet = {
  /** The wallet contract's address (workchain 0). */
  address: Address;
  /** `0:<hex>`, as `ton_addr` carries it. */
  rawAddress: string;
  /** 32 bytes in hex, as `ton_addr` carries it. */
  publicKey: string;
  /** Every call, in arrival order, with its reply. */
  calls: TonWalletCall[];
};

/** Tonkeeper's JS bridge key: the SDK's wallet list names it, so the SDK finds this bridge without QA mode. */
export const TON_JS_BRIDGE_KEY = "tonkeeper";

const BINDING = "__svcTestTonWalletRequest";
const PROTOCOL_VERSION = 2;

const DEVICE_INFO = {
  platform: "browser",
  appName: "Tonkeeper",
  appVersion: "4.0.0-test",
  maxProtocolVersion: PROTOCOL_VERSION,
  features: [
    { name: "SendTransaction", maxMessages: 4 },
    { name: "SignData", types: ["text"] },
  ],
};

const WALLET_INFO = {
  name: "Tonkeeper",
  app_name: "tonkeeper",
  image:
    "data:image/svg+xml,%3Csvg%20xmlns='http://www.w3.org/2000/svg'%20viewBox='0%200%2096%2096'%3E%3Crect%20width='96'%20height='96'%20rx='20'%20fill='%230098ea'/%3E%3C/svg%3E",
  about_url: "https://tonkeeper.com",
  platforms: ["chrome", "firefox", "safari"],
};

/** TON Connect error codes (requests-responses.md). */
const ERR = { unknown: 0, badRequest: 1, manifestNotFound: 2, manifestContent: 3, unknownApp: 100, notSupported: 400 } as const;

/**
 * Installs the wallet into `context`; call before opening pages.
 *
 * @example
 * const wallet = await installInjectedTonWallet(context, { keyPair: keyPairFromSeed(seed), version: "v4" });
 * await page.goto(merchant.origin);
 * expect(wallet.calls.find((c) => c.method === "signData")?.reply).toMatchObject({ result: { domain: "127.0.0.1:8788" } });
 */
export async function installInjectedTonWallet(context: BrowserContext, opts: InjectedTonWalletOptions): Promise<InjectedTonWallet> {
  const network = opts.network ?? "-3";
  const publicKey = opts.keyPair.publicKey;
  const contract =
    opts.version === "v4"
      ? WalletContractV4.create({ workchain: 0, publicKey })
      : WalletContractV5R1.create({ workchain: 0, publicKey, walletId: { networkGlobalId: Number(network) } });
  const address = contract.address;
  const rawAddress = address.toRawString();
  const tonAddr = {
    name: "ton_addr",
    address: rawAddress,
    network,
    publicKey: publicKey.toString("hex"),
    walletStateInit: stateInitBoc(contract.init),
  };
  const calls: TonWalletCall[] = [];
  const connected = new Set<string>();
  let eventId = 0;

  const connectEvent = (items: unknown[]) => ({ event: "connect", id: eventId++, payload: { items, device: DEVICE_INFO } });
  const connectError = (code: number, message: string) => ({ event: "connect_error", id: eventId++, payload: { code, message } });

  async function connect(origin: string, params: unknown) {
    const { protocolVersion, request } = (params ?? {}) as { protocolVersion?: unknown; request?: { manifestUrl?: unknown; items?: unknown } };
    if (typeof protocolVersion !== "number" || protocolVersion < 2 || protocolVersion > PROTOCOL_VERSION) {
      return connectError(ERR.badRequest, `Unsupported protocol version ${String(protocolVersion)}`);
    }
    const items = Array.isArray(request?.items) ? (request.items as { name?: unknown }[]) : [];
    if (typeof request?.manifestUrl !== "string" || !items.some((i) => i?.name === "ton_addr")) {
      return connectError(ERR.badRequest, "A connect request needs a manifestUrl and a ton_addr item");
    }
    const manifest = await fetchManifest(request.manifestUrl);
    if ("error" in manifest) return connectError(manifest.error.code, manifest.error.message);
    connected.add(origin);
    return connectEvent(
      items.map((item) =>
        item?.name === "ton_addr" ? tonAddr : { name: item?.name, error: { code: ERR.notSupported, message: "The test wallet answers ton_addr only" } },
      ),
    );
  }

  function signData(frameUrl: string, request: { params?: unknown; id?: unknown }) {
    const id = String(request.id);
    const fail = (code: number, message: string) => ({ error: { code, message }, id });
    let payload: { type?: unknown; text?: unknown; from?: unknown; network?: unknown };
    try {
      payload = JSON.parse(String((request.params as unknown[] | undefined)?.[0]));
    } catch {
      return fail(ERR.badRequest, "signData params must be [JSON string]");
    }
    if (payload.type !== "text" || typeof payload.text !== "string") return fail(ERR.badRequest, "The test wallet signs text payloads only");
    if (payload.network !== undefined && payload.network !== network)
      return fail(ERR.badRequest, `The wallet is on network ${network}, not ${String(payload.network)}`);
    if (payload.from !== undefined && !sameAddress(payload.from, address))
      return fail(ERR.badRequest, `The wallet is ${rawAddress}, not ${String(payload.from)}`);
    // A wallet names the dApp by the host that asked (host[:port], what `new URL(…).host` gives).
    const domain = new URL(frameUrl).host;
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = sign(signDataTextDigest({ address, domain, timestamp, text: payload.text }), opts.keyPair.secretKey);
    return { result: { signature: signature.toString("base64"), address: rawAddress, timestamp, domain, payload: { type: "text", text: payload.text } }, id };
  }

  async function handle(frameUrl: string, method: string, params: unknown): Promise<{ method: string; reply: unknown }> {
    const origin = originOf(frameUrl);
    switch (method) {
      case "connect":
        return { method, reply: await connect(origin, params) };
      case "restoreConnection":
        return { method, reply: connected.has(origin) ? connectEvent([tonAddr]) : connectError(ERR.unknownApp, "Unknown app: not connected") };
      case "disconnect":
        connected.delete(origin);
        return { method, reply: null };
      case "send": {
        const request = (params ?? {}) as { method?: unknown; params?: unknown; id?: unknown };
        const name = String(request.method);
        const id = String(request.id);
        if (!connected.has(origin)) return { method: name, reply: { error: { code: ERR.unknownApp, message: "Unknown app: not connected" }, id } };
        if (name === "signData") return { method: name, reply: signData(frameUrl, request) };
        if (name === "disconnect") {
          connected.delete(origin);
          return { method: name, reply: { result: {}, id } };
        }
        return { method: name, reply: { error: { code: ERR.notSupported, message: `The test wallet does not support ${name}` }, id } };
      }
      default:
        return { method, reply: { error: { code: ERR.notSupported, message: `Unknown bridge call ${method}` } } };
    }
  }

  // Never throws across the binding: the reply carries the error.
  await context.exposeBinding(BINDING, async (source, request: { method: string; params: unknown }) => {
    const frameUrl = source.frame.url();
    let out: { method: string; reply: unknown };
    try {
      out = await handle(frameUrl, request.method, request.params);
    } catch (e) {
      out = { method: request.method, reply: { error: { code: ERR.unknown, message: e instanceof Error ? e.message : String(e) } } };
    }
    const params = out.method === "signData" ? parseSignDataParams(request.params) : request.params;
    calls.push({ method: out.method, params, origin: originOf(frameUrl), reply: out.reply });
    return out.reply;
  });
  await context.addInitScript(injectBridge, {
    binding: BINDING,
    key: TON_JS_BRIDGE_KEY,
    deviceInfo: DEVICE_INFO,
    walletInfo: WALLET_INFO,
    protocolVersion: PROTOCOL_VERSION,
  });
  return { address, rawAddress, publicKey: tonAddr.publicKey, calls };
}

/**
 * The SHA-256 digest a TON wallet signs (ed25519) for a TON Connect `signData`
 * request with a `text` payload, written independently of the server's
 * verifier (shared/domain/wallet-signatures.ts) from the spec
 * (requests-responses.md, "Sign Data") and its reference implementation
 * (`createTextBinaryHash`, which Tonkeeper uses):
 *
 *     sha256(0xffff ++ "ton-connect/sign-data/" ++ int32be(workchain) ++ address hash
 *            ++ uint32be(len(domain)) ++ domain ++ uint64be(timestamp) ++ "txt" ++ uint32be(len(text)) ++ text)
 */
export function signDataTextDigest(input: { address: Address; domain: string; timestamp: number; text: string }): Buffer {
  const workchain = Buffer.alloc(4);
  workchain.writeInt32BE(input.address.workChain);
  const domain = Buffer.from(input.domain, "utf8");
  const domainLength = Buffer.alloc(4);
  domainLength.writeUInt32BE(domain.length);
  const timestamp = Buffer.alloc(8);
  timestamp.writeBigUInt64BE(BigInt(input.timestamp));
  const text = Buffer.from(input.text, "utf8");
  const textLength = Buffer.alloc(4);
  textLength.writeUInt32BE(text.length);
  const message = Buffer.concat([
    Buffer.from([0xff, 0xff]),
    Buffer.from("ton-connect/sign-data/", "utf8"),
    workchain,
    input.address.hash,
    domainLength,
    domain,
    timestamp,
    Buffer.from("txt", "utf8"),
    textLength,
    text,
  ]);
  return createHash("sha256").update(message).digest();
}

function stateInitBoc(init: StateInit): string {
  return beginCell().store(storeStateInit(init)).endCell().toBoc().toString("base64");
}

function sameAddress(value: unknown, address: Address): boolean {
  try {
    return typeof value === "string" && Address.parse(value).equals(address);
  } catch {
    return false;
  }
}

function parseSignDataParams(params: unknown): unknown {
  try {
    return JSON.parse(String(((params as { params?: unknown[] }).params ?? [])[0]));
  } catch {
    return params;
  }
}

/** The manifest as a wallet reads it; only loopback URLs are fetched. */
async function fetchManifest(url: string): Promise<{ url: string; name: string } | { error: { code: number; message: string } }> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { error: { code: ERR.manifestNotFound, message: `App manifest not found: ${url}` } };
  }
  if (!["127.0.0.1", "localhost", "[::1]"].includes(parsed.hostname)) {
    return { error: { code: ERR.manifestNotFound, message: `The test wallet fetches loopback manifests only, not ${url}` } };
  }
  const res = await fetch(parsed).catch(() => null);
  if (!res?.ok) return { error: { code: ERR.manifestNotFound, message: `App manifest not found: ${url} (${res?.status ?? "unreachable"})` } };
  const body = (await res.json().catch(() => null)) as { url?: unknown; name?: unknown; iconUrl?: unknown } | null;
  if (typeof body?.url !== "string" || typeof body.name !== "string" || typeof body.iconUrl !== "string") {
    return { error: { code: ERR.manifestContent, message: "App manifest content error: url, name and iconUrl are required" } };
  }
  return { url: body.url, name: body.name };
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/** Runs in each frame before its scripts (serialized by Playwright: no closures, no DOM types). */
function injectBridge(cfg: { binding: string; key: string; deviceInfo: unknown; walletInfo: unknown; protocolVersion: number }): void {
  const g = globalThis as any;
  if (g[cfg.key]?.tonconnect) return;
  const listeners = new Set<(event: unknown) => void>();
  const call = (method: string, params: unknown): Promise<any> => g[cfg.binding]({ method, params });
  const tonconnect = {
    deviceInfo: cfg.deviceInfo,
    walletInfo: cfg.walletInfo,
    protocolVersion: cfg.protocolVersion,
    isWalletBrowser: false,
    connect: (protocolVersion: number, message: unknown) => call("connect", { protocolVersion, request: message }),
    restoreConnection: () => call("restoreConnection", null),
    send: (message: unknown) => call("send", message),
    listen(callback: (event: unknown) => void) {
      listeners.add(callback);
      return () => void listeners.delete(callback);
    },
    disconnect: async () => void (await call("disconnect", null)),
  };
  g[cfg.key] = { tonconnect };
  // The test's hand on the wallet: an event from the wallet's side (its user disconnects the site), to the SDK's listeners.
  g.__svcTonEmit = (event: unknown) => {
    for (const listener of [...listeners]) listener(event);
  };
}
