import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { artifactsDir, launchBrowser, servePage, type ServedPage } from "./browser.ts";
import { signUpMerchant, startTestStack, type TestStack } from "./integration.ts";
import { debugPage, merchantPage, recordingFailure, refuseOffsite, shot, widgetFrame } from "./widget-harness.ts";

/**
 * WalletConnect in the widget, in Chromium, offline: with the embed worker's
 * WALLETCONNECT_PROJECT_ID set, the widget offers WalletConnect; choosing it
 * loads WalletConnect's UniversalProvider, which connects to the relay (here
 * a scripted stand-in answering its JSON-RPC: subscriptions and publishes) and
 * creates a pairing, shown as a QR code and a deep link. Nothing else leaves
 * the machine (telemetry is off).
 */
const PROJECT_ID = "0123456789abcdef0123456789abcdef";
let stack: TestStack;
let browser: Browser;
const pages: ServedPage[] = [];
beforeAll(async () => {
  [stack, browser] = await Promise.all([
    startTestStack({ vars: { WALLETCONNECT_PROJECT_ID: PROJECT_ID }, ratelimits: { IP_LIMITER: { limit: 1000 } } }),
    launchBrowser(),
  ]);
}, 90_000);
afterAll(async () => {
  for (const p of pages) p.close();
  await browser?.close();
  await stack?.dispose();
});

test("with a project id, WalletConnect is offered and its pairing is shown as a QR code and a wc: deep link", async () => {
  const dir = await artifactsDir("widget-walletconnect");
  const m = await signUpMerchant(stack, "WC Shop");
  const shop = servePage(merchantPage(stack.embedUrl, m.embedKey, "WEB", "WC Shop"), { hostname: "127.0.0.1" });
  pages.push(shop);
  const program = (await m.dashboard("/v1/me")).body.widgetPrograms[0];
  expect(
    (
      await m.dashboard(`/v1/widget-programs/${program.id}`, {
        method: "PUT",
        json: { name: program.name, merchantConfigId: program.merchantConfigId, allowedOrigins: [shop.origin] },
      })
    ).status,
  ).toBe(200);

  const context = await browser.newContext({ viewport: { width: 360, height: 740 } });
  const offsite = await refuseOffsite(context);
  // The relay: every JSON-RPC request is answered as the relay would (subscription ids, true for publishes).
  const relay: { url: string; methods: string[] } = { url: "", methods: [] };
  await context.routeWebSocket(/^wss:\/\/relay\.walletconnect\.(org|com)/, (ws) => {
    relay.url = ws.url();
    ws.onMessage((raw) => {
      const req = JSON.parse(String(raw));
      if (typeof req.method !== "string") return;
      relay.methods.push(req.method);
      const method: string = req.method.replace(/^irn_/, "");
      const result =
        method === "batchSubscribe"
          ? (req.params.topics as string[]).map((t) => `sub-${t.slice(0, 8)}`)
          : method === "subscribe"
            ? `sub-${String(req.params.topic).slice(0, 8)}`
            : method === "batchFetchMessages"
              ? { messages: [], hasMore: false }
              : true;
      ws.send(JSON.stringify({ id: req.id, jsonrpc: "2.0", result }));
    });
  });
  const page = await context.newPage();
  debugPage(page);
  await page.goto(shop.origin);
  const frame = await widgetFrame(page, stack.embedUrl);
  await recordingFailure(
    page,
    () => frame,
    dir,
    async () => {
      // No injected wallet in this browser: WalletConnect is the one way offered.
      const wc = frame.getByRole("button", { name: "Connect WalletConnect" });
      await wc.waitFor();
      expect(await frame.locator("ul.wallets button").count()).toBe(1);
      await wc.click();
      const link = frame.getByRole("link", { name: "Open wallet app" });
      await link.waitFor({ timeout: 20_000 });
      const uri = (await link.getAttribute("href"))!;
      expect(uri).toMatch(/^wc:[0-9a-f]{64}@2\?/);
      const params = new URL(uri).searchParams;
      expect(params.get("relay-protocol")).toBe("irn");
      expect(params.get("symKey")).toMatch(/^[0-9a-f]{64}$/);
      expect(await frame.getByRole("img", { name: "QR code of the wallet connection link" }).locator("svg").count()).toBe(1);
      await shot(page, dir, "1-pairing");
      expect(new URL(relay.url).searchParams.get("projectId")).toBe(PROJECT_ID);
      // The session proposal went to the relay (which a wallet scanning the code would answer).
      expect(relay.methods).toContain("wc_proposeSession");
      expect(offsite).toEqual([]);
    },
  );
  await context.close();
}, 60_000);
