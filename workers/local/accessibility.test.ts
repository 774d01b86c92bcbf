import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { axeViolations } from "./accessibility.ts";
import { launchBrowser, servePage } from "./browser.ts";

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
}, 30_000);
afterAll(() => browser?.close());

test("the checker finds what the widget tests assert is absent: unlabeled inputs, poor contrast, unnamed buttons", async () => {
  const bad = servePage(`<!doctype html><html lang="en"><head><title>bad</title><meta http-equiv="Content-Security-Policy" content="script-src 'none'"></head>
<body><main><input id="amount"><p style="color:#aaa;background:#fff">Total due</p><button></button></main></body></html>`);
  const good = servePage(`<!doctype html><html lang="en"><head><title>good</title></head>
<body><main><label for="amount">Amount</label><input id="amount"><p style="color:#111;background:#fff">Total due</p><button>Borrow</button></main></body></html>`);
  try {
    const page = await browser.newPage();
    await page.goto(bad.origin);
    // Even under a CSP that forbids every script, the checker runs.
    const ids = (await axeViolations(page.mainFrame())).map((v) => v.id).sort();
    expect(ids).toEqual(["button-name", "color-contrast", "label"]);
    await page.goto(good.origin);
    expect(await axeViolations(page.mainFrame())).toEqual([]);
    await page.close();
  } finally {
    bad.close();
    good.close();
  }
}, 30_000);
