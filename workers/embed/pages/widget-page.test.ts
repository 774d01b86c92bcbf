import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../../shared/testing/harness.ts";
import { bearer, signUpTenant } from "../../../shared/testing/fixtures.ts";
import type { WidgetBoot } from "../client/boot.ts";
import { WIDGET_APP_ENTRY, WIDGET_APP_FILES } from "../client-assets.generated.ts";
import { createEmbedTestApp } from "../testing/harness.ts";
import { brandColor, contrastRatio, textOn } from "./brand-colors.ts";

let t: TestApp;
let e: ReturnType<typeof createEmbedTestApp>;
beforeAll(async () => {
  t = await createTestApp();
  e = createEmbedTestApp(t);
});
afterAll(() => t.close());

const SHOP = "https://shop.example";

async function merchant(branding: Record<string, unknown> = {}, network: "POLYGON" | "TON" = "POLYGON") {
  const owner = await signUpTenant(t);
  await t.request("PUT", "/v1/settings", {
    body: {
      requiresKycBeforeFunding: false,
      branding: { companyName: "Shop & Co", logoUrl: null, primaryColor: null, supportEmail: null, termsUrl: null, ...branding },
    },
    headers: bearer(owner.token),
  });
  const me = (await t.request("GET", "/v1/me", { headers: bearer(owner.token) })).body;
  const program = me.widgetPrograms[0];
  let merchantConfigId = program.merchantConfigId;
  if (network === "TON") {
    const config = await t.request("POST", "/v1/merchant-configs", {
      body: {
        network: "TON",
        stablecoin: "USDT",
        tenures: [3],
        minTicket: "10.00",
        maxTicket: "500.00",
        gracePeriodDays: 3,
        processingFee: { type: "FIXED", value: "1.00" },
        lateFee: { type: "FIXED", value: "0.50" },
      },
      headers: bearer(owner.token),
    });
    merchantConfigId = config.body.id;
  }
  const put = await t.request("PUT", `/v1/widget-programs/${program.id}`, {
    body: { name: program.name, merchantConfigId, allowedOrigins: [SHOP, "http://localhost:5173"] },
    headers: bearer(owner.token),
  });
  expect(put.status).toBe(200);
  return { embedKey: program.embedKey as string, programId: program.id as string };
}

function parsePage(html: string) {
  const boot = JSON.parse(/<script type="application\/json" id="widget-boot">(.*?)<\/script>/s.exec(html)![1]!) as WidgetBoot;
  const scripts = [...html.matchAll(/<script\b([^>]*)>/g)].map((m) => m[1]!);
  return { boot, scripts };
}

describe("the iframe page /embed/<key>", () => {
  test("an unknown key is 404 with the error body", async () => {
    const res = await e.request("GET", "/embed/ek_test_nope");
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ statusCode: 404, error: "Not Found" });
  });

  test("framed only by the program's origins; the one script is the nonce'd app module; boot data for the flow", async () => {
    const m = await merchant();
    const res = await e.request("GET", `/embed/${m.embedKey}?channel=IOS&parent=${encodeURIComponent(SHOP)}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const csp = res.headers.get("content-security-policy")!;
    expect(csp).toContain(`frame-ancestors ${SHOP} http://localhost:5173`);
    expect(csp).toContain("object-src 'none'");
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)![1]!;
    expect(csp).not.toContain("unsafe-inline' 'unsafe-eval");
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    const html = String(res.body);
    // Standards mode (an audit found the page in quirks mode without a doctype).
    expect(html.startsWith('<!doctype html><html lang="en">')).toBe(true);
    const { boot, scripts } = parsePage(html);
    // Every executable script carries this response's nonce; the boot block is data (type application/json).
    const executable = scripts.filter((attrs) => !attrs.includes('type="application/json"'));
    expect(executable).toEqual([` type="module" nonce="${nonce}" src="/embed-assets/${WIDGET_APP_ENTRY}"`]);
    expect(boot).toMatchObject({
      embedKey: m.embedKey,
      channel: "IOS",
      parentOrigin: SHOP,
      apiBase: `/v1/embed/${m.embedKey}`,
      repayPath: `/embed/${m.embedKey}/repay/`,
      family: "EVM",
      evmChainId: 80002,
      walletConnectProjectId: null,
      config: { program: { id: m.programId }, chain: "POLYGON_AMOY", stablecoin: "USDC", tenures: [3, 7, 15], poweredBy: "Powered by svc credit" },
    });
    expect(html).toContain('<footer data-testid="powered-by">Powered by svc credit</footer>');
    expect(html).toContain(`<meta property="csp-nonce" nonce="${nonce}"/>`);
    expect(res.headers.get("cache-control")).toBe("no-store");
    // Another response, another nonce.
    const again = await e.request("GET", `/embed/${m.embedKey}`);
    expect(/script-src 'nonce-([^']+)'/.exec(again.headers.get("content-security-policy")!)![1]).not.toBe(nonce);
  });

  test("the same config as GET …/config", async () => {
    const m = await merchant();
    const page = parsePage(String((await e.request("GET", `/embed/${m.embedKey}`)).body));
    const config = await e.request("GET", `/v1/embed/${m.embedKey}/config`);
    expect(page.boot.config).toEqual(config.body);
  });

  test("a parent that is not one of the program's origins is dropped (nothing is posted to it); an unknown channel is WEB", async () => {
    const m = await merchant();
    for (const parent of ["https://evil.example", "*", "https://shop.example.evil.example", ""]) {
      const { boot } = parsePage(String((await e.request("GET", `/embed/${m.embedKey}?channel=TV&parent=${encodeURIComponent(parent)}`)).body));
      expect(boot.parentOrigin).toBeNull();
      expect(boot.channel).toBe("WEB");
    }
    const { boot } = parsePage(String((await e.request("GET", `/embed/${m.embedKey}?channel=PARTNER_WEBVIEW`)).body));
    expect(boot).toMatchObject({ parentOrigin: null, channel: "PARTNER_WEBVIEW" });
  });

  test("framed as SPEC.md shows it (no ?parent=): the parent is the Referer's origin when it is one of the program's, so svc:kyc-required still reaches it; any other Referer, none, or a ?parent= of another origin: no parent", async () => {
    const m = await merchant();
    const bootFor = async (query: string, referer?: string) =>
      parsePage(String((await e.request("GET", `/embed/${m.embedKey}${query}`, referer ? { headers: { referer } } : {})).body)).boot;
    expect((await bootFor("", `${SHOP}/checkout?step=2`)).parentOrigin).toBe(SHOP);
    for (const referer of ["https://evil.example/", `${SHOP}.evil.example/`, "not a url", undefined])
      expect((await bootFor("", referer)).parentOrigin).toBeNull();
    // An explicit ?parent= decides (widget.js sends the page's own origin).
    expect((await bootFor(`?parent=${encodeURIComponent("https://evil.example")}`, `${SHOP}/`)).parentOrigin).toBeNull();
  });

  test("branding is escaped: name and logo as text and attribute, a color only as #RRGGBB", async () => {
    const m = await merchant({
      companyName: `</script><script>alert(1)</script>"<b>`,
      logoUrl: "https://cdn.example/logo.png?a=1&b=2",
      primaryColor: "#FFE600",
    });
    const html = String((await e.request("GET", `/embed/${m.embedKey}`)).body);
    expect(html).not.toContain("<script>alert(1)</script>");
    expect(html).toContain("<h1>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&quot;&lt;b&gt;</h1>");
    expect(html).toContain('src="https://cdn.example/logo.png?a=1&amp;b=2"');
    // The boot JSON cannot close its script element.
    const { boot } = parsePage(html);
    expect(boot.config.branding.companyName).toBe(`</script><script>alert(1)</script>"<b>`);
    // A light brand color gets dark text on buttons.
    expect(html).toContain("--brand:#FFE600;--on-brand:#000000");
  });

  test("the TON program's page: TON family, manifest URL, and its wallets may connect to TON Connect bridges", async () => {
    const m = await merchant({}, "TON");
    const res = await e.request("GET", `/embed/${m.embedKey}`);
    const { boot } = parsePage(String(res.body));
    expect(boot).toMatchObject({ family: "TON", evmChainId: null, tonManifestUrl: `http://localhost/embed/${m.embedKey}/tonconnect-manifest.json` });
    expect(res.headers.get("content-security-policy")).toContain("connect-src 'self' https:");
    const manifest = await e.request("GET", `/embed/${m.embedKey}/tonconnect-manifest.json`);
    expect(manifest.status).toBe(200);
    expect(manifest.body).toEqual({ url: "http://localhost", name: "Shop & Co", iconUrl: "http://localhost/embed-assets/icon.png" });
    expect(manifest.headers.get("access-control-allow-origin")).toBe("*");
    const png = await e.app.request("/embed-assets/icon.png");
    expect(png.headers.get("content-type")).toBe("image/png");
    expect([...new Uint8Array(await png.arrayBuffer()).slice(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  });

  test("WalletConnect is offered, and its relay allowed, only with a project id", async () => {
    const m = await merchant();
    const plain = await e.request("GET", `/embed/${m.embedKey}`);
    expect(plain.headers.get("content-security-policy")).toContain("connect-src 'self';");
    const wc = createEmbedTestApp(t, { walletConnectProjectId: "0123456789abcdef0123456789abcdef" });
    const res = await wc.request("GET", `/embed/${m.embedKey}`);
    expect(parsePage(String(res.body)).boot.walletConnectProjectId).toBe("0123456789abcdef0123456789abcdef");
    expect(res.headers.get("content-security-policy")).toContain("connect-src 'self' wss://relay.walletconnect.com");
  });
});

describe("the app's modules /embed-assets/<name>", () => {
  test("the entry and every chunk are served as JavaScript, cached for good; an unknown name is 404", async () => {
    expect(Object.keys(WIDGET_APP_FILES)).toContain(WIDGET_APP_ENTRY);
    for (const name of Object.keys(WIDGET_APP_FILES)) {
      const res = await e.app.request(`/embed-assets/${name}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
      expect(res.headers.get("cache-control")).toContain("immutable");
      expect(await res.text()).toBe(WIDGET_APP_FILES[name]!);
    }
    const missing = await e.request("GET", "/embed-assets/app-nope.js");
    expect(missing.status).toBe(404);
    expect((await e.request("GET", "/embed-assets/constructor")).status).toBe(404);
  });
});

describe("brand colors", () => {
  test("only #RRGGBB is used; the button text keeps at least 4.5:1 contrast on any brand color", () => {
    expect(brandColor("#0A7E3D")).toBe("#0A7E3D");
    for (const bad of ["red", "#fff", "#12345g", "#1234567", "#123456;background:url(x)", null, undefined]) expect(brandColor(bad)).toBe("#1f4fd1");
    for (let i = 0; i < 4096; i++) {
      const hex = `#${(i * 4093).toString(16).padStart(6, "0").slice(-6)}`;
      const best = Math.max(contrastRatio(hex, "#ffffff"), contrastRatio(hex, "#000000"));
      expect(contrastRatio(hex, textOn(hex))).toBe(best);
      expect(best).toBeGreaterThanOrEqual(4.5);
    }
    expect(textOn("#1f4fd1")).toBe("#ffffff");
    expect(textOn("#FFE600")).toBe("#000000");
  });
});
