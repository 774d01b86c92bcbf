import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { artifactsDir, launchBrowser } from "./browser.ts";
import { startTestStack, type TestStack } from "./integration.ts";
import { refuseOffsite, shot } from "./widget-harness.ts";

/**
 * The interactive docs (`{base_url}/docs`) in Chromium against the real
 * workers, offline: every request beyond loopback is refused and counted.
 * The page must render both documents' operations from what the api worker
 * serves itself, under its CSP, with no violation and no console error.
 * Screenshots: test-artifacts/docs/.
 */
let stack: TestStack;
let browser: Browser;
beforeAll(async () => {
  [stack, browser] = await Promise.all([startTestStack(), launchBrowser()]);
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await stack?.dispose();
});

type Violation = { directive: string; blocked: string; source: string; sample: string };

/** An operation's block in Swagger UI, by method and path as the document spells it. */
const operation = (page: Page, method: string, path: string) =>
  page.locator(`.opblock-${method.toLowerCase()}:has(.opblock-summary-path[data-path="${path}"])`);

test("/docs renders both documents' operations, tries a call, and nothing leaves the machine or breaks the CSP", async () => {
  const dir = await artifactsDir("docs");
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const offsite = await refuseOffsite(context);
  // Before any of the page's scripts: every CSP violation of the document (a blocked script, style, image, fetch…).
  await context.addInitScript(() => {
    const g = globalThis as any;
    g.cspViolations = [];
    g.document.addEventListener("securitypolicyviolation", (e: any) =>
      g.cspViolations.push({ directive: e.effectiveDirective, blocked: e.blockedURI, source: `${e.sourceFile}:${e.lineNumber}`, sample: e.sample }),
    );
  });
  const page = await context.newPage();
  const requested: string[] = [];
  const consoleErrors: string[] = [];
  page.on("request", (req) => requested.push(req.url()));
  page.on("console", (msg) => msg.type() === "error" && consoleErrors.push(msg.text()));
  const violations = () => page.evaluate(() => (globalThis as any).cspViolations as Violation[]);

  try {
    const res = await page.goto(`${stack.baseUrl}/docs`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()["content-security-policy"]).toContain("default-src 'none'");

    // The api document: its operations render, and one opens with its responses.
    const createLoan = operation(page, "POST", "/v1/loans");
    await createLoan.waitFor({ timeout: 30_000 });
    expect(await page.locator(".opblock").count()).toBeGreaterThan(40);
    await createLoan.locator(".opblock-summary-control").click();
    await createLoan.locator(".responses-wrapper").waitFor();
    expect(await createLoan.locator(".response[data-code='201']").count()).toBe(1);
    await shot(page, dir, "1-api-document");

    // "Try it out" calls the api from the page (connect-src 'self').
    const health = operation(page, "GET", "/v1/health");
    await health.locator(".opblock-summary-control").click();
    await health.getByRole("button", { name: "Try it out" }).click();
    await health.getByRole("button", { name: "Execute" }).click();
    await health.locator(".live-responses-table .response-col_status", { hasText: "200" }).first().waitFor();

    // The top bar's selector switches to the embed document, fetched from the same origin.
    await page.getByLabel("Select a definition").selectOption({ label: "svc credit embed API (widget)" });
    const quote = operation(page, "POST", "/v1/embed/{embedKey}/quote");
    await quote.waitFor({ timeout: 30_000 });
    await expect(operation(page, "POST", "/v1/loans").count()).resolves.toBe(0);
    await quote.locator(".opblock-summary-control").click();
    await quote.locator(".responses-wrapper").waitFor();
    expect(new URL(page.url()).searchParams.get("urls.primaryName")).toBe("svc credit embed API (widget)");
    await shot(page, dir, "2-embed-document");

    // That address opens the embed document directly (deep link).
    await page.goto(page.url());
    await operation(page, "POST", "/v1/embed/{embedKey}/quote").waitFor({ timeout: 30_000 });

    expect(offsite).toEqual([]);
    expect(requested.filter((url) => !url.startsWith(`${stack.baseUrl}/`) && !url.startsWith("data:"))).toEqual([]);
    expect(requested).toEqual(expect.arrayContaining([`${stack.baseUrl}/v1/openapi.json`, `${stack.baseUrl}/v1/embed/openapi.json`]));
    expect(await violations()).toEqual([]);
    expect(consoleErrors).toEqual([]);
  } catch (err) {
    await shot(page, dir, "failure").catch(() => {});
    console.error(JSON.stringify({ offsite, violations: await violations().catch(() => "(unreadable)"), consoleErrors }, null, 2));
    throw err;
  } finally {
    await context.close();
  }
}, 120_000);
