import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { REPO_ROOT } from "./wrangler-config.ts";

/**
 * The browser tier's helpers: a headless Chromium (Debian's, not a Playwright
 * download), a place for screenshots, and merchant pages on their own origins.
 */

/**
 * Launches headless Chromium from `$CHROMIUM_PATH` (default /usr/bin/chromium).
 * Throws when the executable is missing: browser tests never skip silently.
 *
 * @example
 * const browser = await launchBrowser();
 * const page = await (await browser.newContext()).newPage();
 * await browser.close();
 */
export async function launchBrowser(): Promise<Browser> {
  const executablePath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
  if (!existsSync(executablePath)) {
    throw new Error(
      `Chromium not found at ${executablePath}: install it with \`apt-get install -y chromium\` (Debian) or set CHROMIUM_PATH to a Chromium binary.`,
    );
  }
  return chromium.launch({ executablePath, headless: true, args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"] });
}

/** Makes (if needed) and returns the absolute path of `test-artifacts/<name>` under the repository root (git-ignored). */
export async function artifactsDir(name: string): Promise<string> {
  const dir = join(REPO_ROOT, "test-artifacts", name);
  await mkdir(dir, { recursive: true });
  return dir;
}

export type ServedPage = {
  /** e.g. http://127.0.0.1:41234 (no trailing slash). */
  origin: string;
  close(): void;
};

/**
 * Serves a merchant page on a free port: `html` for every path (text/html), or
 * whatever `html(url)` answers. The socket is always on 127.0.0.1; `hostname`
 * only picks the origin's host, so "127.0.0.1" and "localhost" pages are
 * distinct (cross-site) origins to the browser. Default "127.0.0.1".
 *
 * @example
 * const widget = servePage("<p>widget</p>", { hostname: "localhost" });
 * const merchant = servePage(`<iframe src="${widget.origin}/"></iframe>`);
 * await page.goto(merchant.origin);
 * merchant.close(); widget.close();
 */
export function servePage(html: string | ((url: URL) => Response | Promise<Response>), opts: { hostname?: "127.0.0.1" | "localhost" } = {}): ServedPage {
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (req) => (typeof html === "string" ? new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } }) : html(new URL(req.url))),
  });
  return {
    origin: `http://${opts.hostname ?? "127.0.0.1"}:${server.port}`,
    close: () => void server.stop(true),
  };
}
