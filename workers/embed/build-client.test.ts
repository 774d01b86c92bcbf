import { expect, test } from "bun:test";
import { buildClient } from "./build-client.ts";
import { WIDGET_APP_ENTRY, WIDGET_APP_FILES } from "./client-assets.generated.ts";

test("the widget app builds reproducibly into what the worker serves; wallet SDKs stay out of the entry", async () => {
  const first = await buildClient();
  const again = await buildClient();
  expect(again.changed).toBe(false);
  expect(again.entry).toBe(first.entry);
  expect(first.entry).toBe(WIDGET_APP_ENTRY);
  expect(first.files.map((f) => f.name).sort()).toEqual(Object.keys(WIDGET_APP_FILES).sort());
  const entry = WIDGET_APP_FILES[WIDGET_APP_ENTRY]!;
  // WalletConnect, TON Connect and the QR generator load only when used: the entry only imports their chunks.
  const has = (text: string, marker: string) => text.includes(marker);
  expect(has(entry, "relay.walletconnect")).toBe(false);
  expect(has(entry, "ton_addr")).toBe(false);
  expect(has(entry, "createSvgTag=")).toBe(false);
  const chunks = Object.keys(WIDGET_APP_FILES).filter((n) => n !== WIDGET_APP_ENTRY);
  expect(chunks.every((chunk) => has(entry, `import("./${chunk}")`))).toBe(true);
  expect(Object.values(WIDGET_APP_FILES).filter((f) => has(f, "relay.walletconnect"))).toHaveLength(1);
  expect(Object.values(WIDGET_APP_FILES).filter((f) => has(f, "ton_addr"))).toHaveLength(1);
  expect(Bun.gzipSync(entry).length).toBeLessThan(25_000);
});
