import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../../shared/testing/harness.ts";
import { createEmbedTestApp } from "../testing/harness.ts";
import { newNonce, pageSecurityHeaders } from "./content-security.ts";
import { WIDGET_SCRIPT } from "./widget-script.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe("widget.js", () => {
  test("served as JavaScript, small, and parses", async () => {
    const e = createEmbedTestApp(t);
    const res = await e.request("GET", "/widget.js");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(res.body).toBe(WIDGET_SCRIPT);
    expect(Bun.gzipSync(new TextEncoder().encode(WIDGET_SCRIPT)).length).toBeLessThan(5120);
    expect(() => new Function(WIDGET_SCRIPT)).not.toThrow();
  });

  test("mounts the iframe with the key, channel and parent origin; relays only the widget's messages", () => {
    const listeners: Record<string, ((e: any) => void)[]> = {};
    const dispatched: { type: string; detail: unknown }[] = [];
    const posted: { message: unknown; target: string }[] = [];
    const frame: any = { style: {}, setAttribute() {}, contentWindow: { postMessage: (message: unknown, target: string) => posted.push({ message, target }) } };
    const host: any = {
      insertBefore(node: unknown) {
        expect(node).toBe(frame);
      },
      dispatchEvent: (e: { type: string; detail: unknown }) => dispatched.push({ type: e.type, detail: e.detail }),
      addEventListener: (type: string, fn: (e: any) => void) => (listeners[`host:${type}`] ??= []).push(fn),
    };
    const script = {
      src: "https://embed.svc.example/widget.js",
      parentElement: host,
      nextSibling: null,
      getAttribute: (n: string) => ({ "data-embed-key": "ek_test_abc", "data-channel": "IOS" })[n] ?? null,
    };
    const window = { addEventListener: (type: string, fn: (e: any) => void) => (listeners[`window:${type}`] ??= []).push(fn) };
    class CustomEvent {
      constructor(
        public type: string,
        public init: { detail?: unknown },
      ) {}
      get detail() {
        return this.init.detail;
      }
    }
    const run = new Function("document", "window", "location", "CustomEvent", "URL", "console", WIDGET_SCRIPT);
    run({ currentScript: script, createElement: () => frame, body: host }, window, { origin: "https://shop.example" }, CustomEvent, URL, console);
    expect(frame.src).toBe("https://embed.svc.example/embed/ek_test_abc?channel=IOS&parent=https%3A%2F%2Fshop.example");

    const message = (origin: string, data: unknown, source = frame.contentWindow) => listeners["window:message"]!.forEach((fn) => fn({ origin, data, source }));
    message("https://embed.svc.example", { type: "svc:resize", height: 720 });
    expect(frame.style.height).toBe("720px");
    message("https://embed.svc.example", { type: "svc:kyc-required", creditLineId: "cl-1", walletAddress: "0xabc" });
    message("https://evil.example", { type: "svc:kyc-required" });
    message("https://embed.svc.example", { type: "svc:kyc-required" }, {});
    message("https://embed.svc.example", { type: "other" });
    expect(dispatched).toEqual([{ type: "svc:kyc-required", detail: { type: "svc:kyc-required", creditLineId: "cl-1", walletAddress: "0xabc" } }]);

    listeners["host:svc:kyc-complete"]!.forEach((fn) => fn({ detail: undefined }));
    expect(posted).toEqual([{ message: { type: "svc:kyc-complete" }, target: "https://embed.svc.example" }]);
  });
});

describe("page security headers", () => {
  test("framed only by the program's origins, scripts only with the nonce", () => {
    const nonce = newNonce();
    const headers = pageSecurityHeaders({ nonce, frameAncestors: ["https://shop.example", "http://localhost:5173"] });
    const csp = headers["content-security-policy"]!;
    expect(csp).toContain("frame-ancestors https://shop.example http://localhost:5173");
    expect(csp).toContain(`script-src 'nonce-${nonce}' 'strict-dynamic'`);
    expect(csp).not.toContain("unsafe-eval");
    expect(csp).toContain("object-src 'none'");
    expect(pageSecurityHeaders({ nonce, frameAncestors: [] })["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(newNonce()).not.toBe(nonce);
  });

  test("an allowed origin saved before the host rule cannot add a directive: it is left out (an audit saved https://a.com;sandbox)", () => {
    const csp = pageSecurityHeaders({ nonce: newNonce(), frameAncestors: ["https://a.com;sandbox", "https://shop.example", 'https://q"x.com'] })[
      "content-security-policy"
    ]!;
    expect(csp.endsWith("frame-ancestors https://shop.example")).toBe(true);
    expect(csp).not.toContain("sandbox");
    expect(pageSecurityHeaders({ nonce: newNonce(), frameAncestors: ["https://x.com;script-src"] })["content-security-policy"]).toContain(
      "frame-ancestors 'none'",
    );
  });
});

describe("embed OpenAPI document", () => {
  test("lists every embed call and widget page", async () => {
    const e = createEmbedTestApp(t);
    const res = await e.request("GET", "/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
    for (const path of ["config", "eligibility", "credit-line/bootstrap", "quote", "accept", "loans/{loanId}", "loans/{loanId}/repayment-instructions"]) {
      expect(Object.keys(res.body.paths)).toContain(`/v1/embed/{embedKey}/${path}`);
    }
    // The widget's pages are listed too, with their content types.
    const pages: Record<string, string> = {
      "/widget.js": "text/javascript",
      "/embed/{embedKey}": "text/html",
      "/embed/{embedKey}/repay/{loanId}": "text/html",
      "/embed/{embedKey}/tonconnect-manifest.json": "application/json",
      "/embed-assets/{name}": "text/javascript",
    };
    for (const [path, type] of Object.entries(pages)) expect(Object.keys(res.body.paths[path].get.responses["200"].content)).toEqual([type]);
    expect(res.body.paths["/embed/{embedKey}"].get.parameters.map((p: { name: string }) => p.name).sort()).toEqual(["channel", "embedKey", "parent"]);
  });
});
