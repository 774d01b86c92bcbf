import { join } from "node:path";
import { expect } from "bun:test";
import type { BrowserContext, Frame, Page } from "playwright-core";
import type { signUpMerchant } from "./integration.ts";

/** The `svc:*` events a merchant page records (`window.svcEvents`). */
export const WIDGET_EVENTS = ["svc:ready", "svc:kyc-required", "svc:loan-created", "svc:loan-funded", "svc:loan-repaid"];

/**
 * A merchant page embedding the widget with its script tag. It records every
 * `svc:*` DOM event widget.js dispatches (`window.svcEvents`) and every raw
 * message the window receives (`window.rawMessages`), and `window.kycComplete()`
 * tells the widget KYC is done, as a merchant's page would.
 */
export const merchantPage = (embedUrl: string, embedKey: string, channel: string, title = "Shop") => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title></head>
<body style="margin:0">
<h1 style="font:16px system-ui;margin:8px">Checkout</h1>
<div id="credit"><script src="${embedUrl}/widget.js" data-embed-key="${embedKey}" data-channel="${channel}"></script></div>
<script>
  window.svcEvents = []; window.rawMessages = [];
  window.addEventListener("message", function (e) { window.rawMessages.push({ origin: e.origin, data: e.data }); });
  ${JSON.stringify(WIDGET_EVENTS)}.forEach(function (type) {
    document.getElementById("credit").addEventListener(type, function (e) { window.svcEvents.push(e.detail); });
  });
  window.kycComplete = function () { document.getElementById("credit").dispatchEvent(new CustomEvent("svc:kyc-complete")); };
</script>
</body></html>`;

/** A full-page screenshot `<dir>/<name>.png`. */
export async function shot(page: Page, dir: string, name: string): Promise<void> {
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
}

/** The first recorded `svc:*` event of `type` (waits for it). */
export async function waitForEvent(page: Page, type: string): Promise<any> {
  const handle = await page.waitForFunction((t) => (globalThis as any).svcEvents.find((e: any) => e.type === t), type, { timeout: 30_000 });
  return handle.jsonValue();
}

/** The widget's iframe, once it is on `{embed_url}/embed/…`. */
export async function widgetFrame(page: Page, embedUrl: string): Promise<Frame> {
  const handle = await page.waitForSelector("iframe");
  const frame = await handle.contentFrame();
  if (!frame || !frame.url().startsWith(`${embedUrl}/embed/`)) throw new Error(`the widget frame is at ${frame?.url()}`);
  return frame;
}

/** The focused element of a frame as TAG:text (TAG:id for inputs). */
export const focused = (frame: Frame) =>
  frame.evaluate(() => {
    const el = (globalThis as any).document.activeElement;
    return `${el.tagName}:${el.tagName === "INPUT" ? el.id : el.textContent.trim()}`;
  });

/** True when the frame's content fits its width (no horizontal scrolling). */
export const noHorizontalOverflow = (frame: Frame) =>
  frame.evaluate(() => (globalThis as any).document.documentElement.scrollWidth <= (globalThis as any).innerWidth);

/** With DEBUG_WIDGET set: every console line and HTTP exchange of the page (both frames) on stdout. */
export function debugPage(page: Page): void {
  if (!process.env.DEBUG_WIDGET) return;
  page.on("console", (msg) => console.log("[browser]", msg.type(), msg.text()));
  page.on("response", async (res) =>
    console.log(
      "[http]",
      res.request().method(),
      res.url(),
      res.request().postData(),
      res.status(),
      res.url().includes("/v1/") ? await res.text().catch(() => "") : "",
    ),
  );
}

/** Runs a browser flow; when it fails, saves `failure.png` and prints what the borrower saw (and `context`) before rethrowing. */
export async function recordingFailure(
  page: Page,
  frame: () => Frame,
  dir: string,
  flow: () => Promise<void>,
  context: () => unknown = () => null,
): Promise<void> {
  try {
    await flow();
  } catch (err) {
    await shot(page, dir, "failure").catch(() => {});
    console.error(
      "widget at failure:",
      await frame()
        .locator("body")
        .innerText()
        .catch(() => "(unreadable)"),
    );
    const extra = context();
    if (extra !== null) console.error(JSON.stringify(extra, null, 2));
    throw err;
  }
}

const loopback = (url: URL) => ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname) || url.protocol === "data:" || url.protocol === "blob:";

/**
 * Refuses (as "internet disconnected") every request of the context beyond
 * loopback, and returns the list it appends their URLs to, so a test can
 * assert what the widget tried to reach.
 */
export async function refuseOffsite(context: BrowserContext): Promise<string[]> {
  const offsite: string[] = [];
  await context.route(
    (url) => !loopback(url),
    (route) => {
      offsite.push(route.request().url());
      return route.abort("internetdisconnected");
    },
  );
  return offsite;
}

/** The embed calls of `embedKey` as a merchant's server makes them (no Origin), for `widgetCalls` (shared/testing/widget-borrower.ts). */
export const embedPost = (embedUrl: string, embedKey: string) => async (path: string, body: unknown) => {
  const res = await fetch(`${embedUrl}/v1/embed/${embedKey}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json(), headers: res.headers };
};

/** Makes `origin` the only one the merchant's first widget program allows (it may frame the widget and call the embed API). */
export async function allowOnlyOrigin(m: Awaited<ReturnType<typeof signUpMerchant>>, origin: string): Promise<void> {
  const program = (await m.dashboard("/v1/me")).body.widgetPrograms[0];
  const put = await m.dashboard(`/v1/widget-programs/${program.id}`, {
    method: "PUT",
    json: { name: program.name, merchantConfigId: program.merchantConfigId, allowedOrigins: [origin] },
  });
  expect(put.status).toBe(200);
}
