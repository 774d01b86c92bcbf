import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser, Frame } from "playwright-core";
import { keccak256, parseTransaction, recoverTransactionAddress, toHex, verifyMessage, type Hex, type TransactionSerializedEIP1559 } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { artifactsDir, launchBrowser, servePage, type ServedPage } from "./browser.ts";
import { installInjectedWallet, TEST_WALLET_INFO } from "./injected-wallet.ts";

/**
 * The browser tier without the widget: a merchant page on 127.0.0.1 framing a
 * page on localhost (another site, so an out-of-process iframe), where the
 * injected wallet is found by EIP-6963 and signs and sends for real.
 */
const CHAIN_ID = 31337;
const TO = "0x00000000000000000000000000000000000000aa";

// The framed page discovers wallets as a dapp does: listen, then ask.
const FRAME_HTML = `<!doctype html><title>widget</title><body style="font:16px sans-serif;background:#eef">
<p id="status">discovering…</p>
<script>
  window.providers = [];
  window.addEventListener("eip6963:announceProvider", (e) => window.providers.push(e.detail));
  window.dispatchEvent(new Event("eip6963:requestProvider"));
  document.getElementById("status").textContent = "wallets: " + window.providers.map((p) => p.info.name).join(", ");
</script></body>`;

let browser: Browser;
let frameServer: ServedPage;
let merchant: ServedPage;
beforeAll(async () => {
  browser = await launchBrowser();
  frameServer = servePage(FRAME_HTML, { hostname: "localhost" });
  merchant = servePage(
    `<!doctype html><title>merchant</title><h1>Merchant</h1><iframe id="widget" src="${frameServer.origin}/widget" width="600" height="300"></iframe>`,
  );
}, 30_000);
afterAll(async () => {
  await browser?.close();
  merchant?.close();
  frameServer?.close();
});

test("a cross-origin iframe finds the injected wallet by EIP-6963, signs, and sends two transactions", async () => {
  const account = privateKeyToAccount(generatePrivateKey());
  const broadcast: Hex[] = [];
  const context = await browser.newContext();
  const wallet = await installInjectedWallet(context, {
    account,
    chainId: CHAIN_ID,
    sendRawTransaction: async (serialized) => {
      broadcast.push(serialized);
      return keccak256(serialized);
    },
  });
  const page = await context.newPage();
  await page.goto(merchant.origin);
  const frame = page.frames().find((f) => f.url().startsWith(frameServer.origin)) as Frame;
  expect(frame).toBeDefined();
  expect(new URL(frame.url()).origin).not.toBe(new URL(page.url()).origin);

  // Every frame gets the provider; the iframe's page saw exactly one announcement.
  expect(await page.evaluate(() => typeof (globalThis as any).ethereum?.request)).toBe("function");
  const discovered = await frame.evaluate(() => {
    const g = globalThis as any;
    return g.providers.map((p: any) => ({ ...p.info, isEthereum: p.provider === g.ethereum, frozen: Object.isFrozen(p) }));
  });
  expect(discovered).toHaveLength(1);
  expect(discovered[0]).toMatchObject({ ...TEST_WALLET_INFO, isEthereum: true, frozen: true });
  expect(discovered[0].uuid).toMatch(/^[0-9a-f-]{36}$/);

  const message = toHex("Sign in to the credit widget");
  const flow = await frame.evaluate(
    async ({ message, to }) => {
      const g = globalThis as any;
      const provider = g.providers[0].provider;
      const events: unknown[] = [];
      provider.on("accountsChanged", (a: unknown) => events.push(["accountsChanged", a]));
      provider.on("chainChanged", (c: unknown) => events.push(["chainChanged", c]));
      const accounts: string[] = await provider.request({ method: "eth_requestAccounts" });
      const chainId: string = await provider.request({ method: "eth_chainId" });
      await provider.request({ method: "wallet_switchEthereumChain", params: [{ chainId }] });
      const signature: string = await provider.request({ method: "personal_sign", params: [message, accounts[0]] });
      const hashes: string[] = [];
      for (const value of ["0x0", "0x10"]) {
        hashes.push(await provider.request({ method: "eth_sendTransaction", params: [{ from: accounts[0], to, data: "0x1234", value }] }));
      }
      const receipt = await provider.request({ method: "eth_getTransactionReceipt", params: [hashes[1]] });
      const failures: { code: unknown; message: unknown; isError: boolean }[] = [];
      for (const request of [{ method: "eth_signTypedData_v3" }, { method: "wallet_switchEthereumChain", params: [{ chainId: "0x1" }] }]) {
        await provider.request(request).then(
          () => failures.push({ code: "resolved", message: "", isError: false }),
          (e: any) => failures.push({ code: e.code, message: e.message, isError: e instanceof Error }),
        );
      }
      g.document.getElementById("status").textContent = `signed by ${accounts[0]}; sent ${hashes.length} transactions`;
      return { accounts, chainId, signature: signature as `0x${string}`, hashes, receiptStatus: receipt?.status, events, failures };
    },
    { message, to: TO },
  );

  expect(flow.accounts).toEqual([account.address]);
  expect(flow.chainId).toBe(toHex(CHAIN_ID));
  expect(flow.events).toEqual([
    ["accountsChanged", [account.address]],
    ["chainChanged", toHex(CHAIN_ID)],
  ]);
  expect(await verifyMessage({ address: account.address, message: { raw: message }, signature: flow.signature })).toBe(true);

  expect(broadcast).toHaveLength(2);
  expect(flow.hashes).toEqual(broadcast.map((tx) => keccak256(tx)));
  expect(flow.receiptStatus).toBe("0x1");
  const parsed = broadcast.map((tx) => parseTransaction(tx));
  expect(parsed.map((tx) => [tx.nonce, tx.chainId, tx.to, tx.value ?? 0n, tx.data])).toEqual([
    [0, CHAIN_ID, TO, 0n, "0x1234"],
    [1, CHAIN_ID, TO, 16n, "0x1234"],
  ]);
  for (const tx of broadcast) expect(await recoverTransactionAddress({ serializedTransaction: tx as TransactionSerializedEIP1559 })).toBe(account.address);

  expect(flow.failures).toEqual([
    { code: 4200, message: "Unsupported method: eth_signTypedData_v3", isError: true },
    { code: 4902, message: expect.stringContaining("Unrecognized chain ID 0x1"), isError: true },
  ]);
  // Every request was recorded, attributed to the iframe's origin.
  expect(wallet.calls.map((c) => c.method)).toEqual([
    "eth_requestAccounts",
    "eth_chainId",
    "wallet_switchEthereumChain",
    "personal_sign",
    "eth_sendTransaction",
    "eth_sendTransaction",
    "eth_getTransactionReceipt",
    "eth_signTypedData_v3",
    "wallet_switchEthereumChain",
  ]);
  expect(new Set(wallet.calls.map((c) => c.origin))).toEqual(new Set([frameServer.origin]));

  await page.screenshot({ path: join(await artifactsDir("browser"), "cross-origin-wallet.png") });
  await context.close();
}, 30_000);
