/** @jsxImportSource hono/jsx */
import type { WidgetBoot } from "../client/boot.ts";
import { brandColor, textOn } from "./brand-colors.ts";
import { HtmlPage } from "./html-page.tsx";

export type WidgetPageInput = { nonce: string; boot: WidgetBoot; entryUrl: string };

const style = (brand: string) =>
  `:root{--brand:${brand};--on-brand:${textOn(brand)}}*{box-sizing:border-box}body{font:16px/1.5 system-ui,sans-serif;margin:0;padding:16px;color:#111;background:#fff;min-width:0}header{display:flex;align-items:center;gap:8px}header img{max-height:32px;max-width:120px}h1{font-size:1.1rem;margin:0}h2{font-size:1.25rem;margin:16px 0 8px}h2:focus{outline:none}button,a.button{background:var(--brand);color:var(--on-brand);border:0;border-radius:8px;padding:12px 16px;font:inherit;font-weight:600;text-decoration:none;display:inline-flex;align-items:center;gap:8px;cursor:pointer;min-height:44px;max-width:100%}button.secondary,a.button.secondary{background:#fff;color:#111;border:2px solid var(--brand)}button:disabled{opacity:.55;cursor:not-allowed}:focus-visible{outline:3px solid #111;outline-offset:2px}ul.wallets{list-style:none;padding:0;display:grid;gap:8px}ul.wallets button{width:100%}input{font:inherit;padding:10px;border:1px solid #555;border-radius:8px;width:100%}input[type=radio],input[type=checkbox]{width:auto;margin:0 6px 0 0}label{display:block;font-weight:600;margin:12px 0 4px}label.choice{display:inline-flex;align-items:center;font-weight:400;margin:4px 16px 4px 0}fieldset{border:0;padding:0;margin:12px 0}legend{font-weight:600;padding:0}.hint{color:#444;font-size:.875rem;margin:4px 0}.error{color:#a00000;background:#fff0f0;border-left:4px solid #a00000;padding:8px 12px}dl.terms{display:grid;grid-template-columns:auto 1fr;gap:4px 12px;margin:12px 0}dt{color:#444}dd{margin:0;font-weight:600;overflow-wrap:anywhere}.mono{font-family:ui-monospace,monospace;font-size:.8rem}.qr svg{width:200px;height:200px}.check{display:flex;align-items:flex-start}.check label{margin:0;font-weight:400}footer{margin-top:24px;color:#444;font-size:.875rem}.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}`;

/**
 * The widget's iframe page `{embed_url}/embed/<key>`: the merchant's logo and
 * name (escaped by JSX), the brand color only as strict #RRGGBB with a text
 * color chosen for contrast, the app's mount point and live region, always
 * the "Powered by" line, the boot data as a JSON block (script text is not
 * entity-decoded, so "<" is escaped), and the app as a nonce'd module.
 */
export function WidgetPage({ nonce, boot, entryUrl }: WidgetPageInput) {
  const b = boot.config.branding;
  const name = b.companyName ?? boot.config.program.name;
  return (
    <HtmlPage
      head={
        <>
          {/* Bun's chunk loader adds <link rel="modulepreload"> for lazy chunks with the nonce it reads here. */}
          <meta property="csp-nonce" nonce={nonce} />
          <title>{`Credit with ${name}`}</title>
          <style>{style(brandColor(b.primaryColor))}</style>
        </>
      }
    >
      <body>
        <header>
          {b.logoUrl ? <img src={b.logoUrl} alt={`${name} logo`} /> : null}
          <h1>{name}</h1>
        </header>
        <main id="app">
          <noscript>This widget needs JavaScript.</noscript>
        </main>
        <p id="status" class="sr-only" role="status" aria-live="polite"></p>
        <footer data-testid="powered-by">{boot.config.poweredBy}</footer>
        <script type="application/json" id="widget-boot" dangerouslySetInnerHTML={{ __html: JSON.stringify(boot).replace(/</g, "\\u003c") }} />
        <script type="module" nonce={nonce} src={entryUrl}></script>
      </body>
    </HtmlPage>
  );
}
