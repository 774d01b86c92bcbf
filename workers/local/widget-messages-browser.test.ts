import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, BrowserContext, Frame, Page } from "playwright-core";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import type { Hex } from "viem";
import { launchBrowser, servePage, type ServedPage } from "./browser.ts";
import { evmBorrower, widgetCalls } from "../../shared/testing/widget-borrower.ts";
import { signUpMerchant, startTestStack, type TestStack } from "./integration.ts";
import { allowOnlyOrigin, embedPost, merchantPage, widgetFrame } from "./widget-harness.ts";

/**
 * What the borrower reads when something goes wrong: a wallet's refusal, an
 * amount out of range, a lost connection, a loan not yet funded on the hosted
 * repay page (a functional audit's findings, each failing before its fix).
 */
let stack: TestStack;
let browser: Browser;
const pages: ServedPage[] = [];
beforeAll(async () => {
  [stack, browser] = await Promise.all([startTestStack({ ratelimits: { IP_LIMITER: { limit: 1000 } } }), launchBrowser()]);
}, 90_000);
afterAll(async () => {
  for (const p of pages) p.close();
  await browser?.close();
  await stack?.dispose();
});

/** A merchant whose program allows a served merchant page's origin. */
async function merchantWithPage(name: string) {
  const m = await signUpMerchant(stack, name);
  const shop = servePage(merchantPage(stack.embedUrl, m.embedKey, "WEB"), { hostname: "127.0.0.1" });
  pages.push(shop);
  await allowOnlyOrigin(m, shop.origin);
  return { m, shop };
}

/**
 * An EIP-6963 wallet ("Audit Wallet") whose personal_sign is answered in the
 * test process with `account`, or rejected with EIP-1193 code 4001 (the user
 * pressed Reject) while `control.reject` is true, as MetaMask does. `emit()`
 * sends one of its EIP-1193 events to the frame's listeners.
 */
async function scriptedWallet(context: BrowserContext, account: PrivateKeyAccount) {
  const control = { reject: false, signs: 0 };
  await context.exposeBinding("__auditSign", async (_src, message: Hex) => {
    if (control.reject) return { error: { code: 4001, message: "User rejected the request." } };
    control.signs++;
    return { result: await account.signMessage({ message: { raw: message } }) };
  });
  await context.addInitScript(
    ({ address }) => {
      const provider = {
        async request({ method, params }: { method: string; params?: unknown[] }) {
          if (method === "eth_requestAccounts" || method === "eth_accounts") return [address];
          if (method === "eth_chainId") return "0x13882";
          if (method === "personal_sign") {
            const r = await (globalThis as any).__auditSign(params![0]);
            if (r.error) throw Object.assign(new Error(r.error.message), { code: r.error.code });
            return r.result;
          }
          throw Object.assign(new Error("unsupported"), { code: 4200 });
        },
        on(event: string, listener: (value: unknown) => void) {
          listeners.push({ event, listener });
        },
        removeListener(event: string, listener: (value: unknown) => void) {
          listeners = listeners.filter((l) => l.event !== event || l.listener !== listener);
        },
      };
      let listeners: { event: string; listener: (value: unknown) => void }[] = [];
      // The test's hand on the wallet: an EIP-1193 event, as the extension emits when its user switches accounts.
      (globalThis as any).__auditEmit = (event: string, value: unknown) => {
        for (const l of listeners.filter((x) => x.event === event)) l.listener(value);
        return listeners.filter((x) => x.event === event).length;
      };
      const detail = Object.freeze({
        info: {
          uuid: "3f2a6a1e-0000-4000-8000-000000000001",
          name: "Audit Wallet",
          icon: "data:image/svg+xml,%3Csvg%20xmlns='http://www.w3.org/2000/svg'/%3E",
          rdns: "dev.svc.audit",
        },
        provider,
      });
      const announce = () => (globalThis as any).dispatchEvent(new CustomEvent("eip6963:announceProvider", { detail }));
      (globalThis as any).addEventListener("eip6963:requestProvider", announce);
      announce();
    },
    { address: account.address },
  );
  return control;
}

/** Emits an EIP-1193 event from the frame's wallet; how many listeners it reached. */
const emit = (frame: Frame, event: string, value: unknown): Promise<number> =>
  frame.evaluate(([e, v]) => (globalThis as any).__auditEmit(e, v), [event, value] as const);

async function openWidget(shop: ServedPage, account: PrivateKeyAccount) {
  const context = await browser.newContext({ viewport: { width: 360, height: 740 } });
  const control = await scriptedWallet(context, account);
  const page: Page = await context.newPage();
  await page.goto(shop.origin);
  const frame: Frame = await widgetFrame(page, stack.embedUrl);
  await frame.getByRole("button", { name: "Connect Audit Wallet" }).waitFor();
  return { context, page, frame, control };
}

/** Connects the wallet and accepts the agreement: the drawdown step. */
async function toDrawStep(frame: Frame): Promise<void> {
  await frame.getByRole("button", { name: "Connect Audit Wallet" }).click();
  await frame.getByLabel("I have read and accept the credit line agreement").check();
  await frame.getByRole("button", { name: "Continue" }).click();
}

/** The text of the error a step shows, once it shows one. */
async function stepError(frame: Frame, step: string): Promise<string> {
  const alert = frame.locator(`[data-step=${step}] .error`);
  await alert.waitFor();
  return (await alert.textContent()) ?? "";
}

const RAW = /Version: viem@|Details:|Request Arguments|UserRejectedRequestError|\bcode\b.*4001/;

test("the wallet rejecting the wallet-session signature at connect shows a plain message, not viem's raw error dump", async () => {
  const { shop } = await merchantWithPage("Reject Connect Shop");
  const { context, frame, control } = await openWidget(shop, privateKeyToAccount(generatePrivateKey()));
  control.reject = true;
  await frame.getByRole("button", { name: "Connect Audit Wallet" }).click();
  const text = await stepError(frame, "connect");
  expect(text).toContain("You declined the request in your wallet. Try again when you are ready.");
  // Held: the button can be pressed again.
  expect(await frame.getByRole("button", { name: "Connect Audit Wallet" }).isEnabled()).toBe(true);
  expect(text).not.toMatch(RAW);
  await context.close();
}, 60_000);

test("the wallet rejecting the agreement signature at 'Sign and borrow' shows a plain message, not viem's raw error dump", async () => {
  const { shop } = await merchantWithPage("Reject Sign Shop");
  const { context, frame, control } = await openWidget(shop, privateKeyToAccount(generatePrivateKey()));
  await toDrawStep(frame);
  await frame.getByLabel("7 days").check();
  await frame.getByLabel("Amount (USDC)").fill("100");
  await frame.getByTestId("total-due").waitFor();
  control.reject = true;
  await frame.getByRole("button", { name: "Sign and borrow" }).click();
  const text = await stepError(frame, "draw");
  expect(text).toBe("You declined the request in your wallet. Try again when you are ready.");
  // Held: signing can be retried.
  expect(await frame.getByRole("button", { name: "Sign and borrow" }).isEnabled()).toBe(true);
  expect(text).not.toMatch(RAW);
  await context.close();
}, 60_000);

test("an amount outside the product's range is explained in the borrower's terms (no 'amount:' field prefix, with the stablecoin)", async () => {
  const { shop } = await merchantWithPage("Range Shop");
  const { context, frame } = await openWidget(shop, privateKeyToAccount(generatePrivateKey()));
  await toDrawStep(frame);
  const amount = frame.getByLabel("Amount (USDC)");
  await amount.fill("5");
  const alert = frame.locator("[data-step=draw] .error");
  await alert.waitFor();
  const below = (await alert.textContent()) ?? "";
  // The next quote's answer, then its message (not a fixed wait).
  const answered = frame.page().waitForResponse((r) => r.url().endsWith("/quote"));
  await amount.fill("1500");
  await answered;
  const above = (await alert.textContent()) ?? "";
  expect([below, above]).toEqual(["Enter an amount between 10.00 and 1000.00 USDC.", "Enter an amount between 10.00 and 1000.00 USDC."]);
  for (const text of [below, above]) {
    expect(text).not.toMatch(/^amount:/);
    expect(text).toContain("USDC");
  }
  await context.close();
}, 60_000);

test("a returning borrower whose line is fully drawn reaches the open loan's hosted repay page from the widget (it said 'repay your open loan' with no way there)", async () => {
  const { m, shop } = await merchantWithPage("Drawn Shop");
  const borrower = evmBorrower();
  const post = embedPost(stack.embedUrl, m.embedKey);
  const drawn = await widgetCalls(post).draw(borrower, { amount: "1000.00", tenureDays: 7 });
  expect(drawn.status).toBe(201);
  const { context, frame } = await openWidget(shop, borrower.account);
  await frame.getByRole("button", { name: "Connect Audit Wallet" }).click();
  // Held: KYC and agreement skipped, the line is seen with the wallet's session.
  await frame.getByRole("heading", { name: "Your credit line is fully drawn" }).waitFor({ timeout: 20_000 });
  // "Repay your open loan to borrow again" must lead somewhere: a link to the loan's hosted repayment page.
  const links = await frame.locator("[data-step=drawn] a").evaluateAll((as) => as.map((a) => (a as unknown as { href: string }).href));
  expect(links.some((href) => href.includes(`/repay/${drawn.body.loan.id}`))).toBe(true);
  await context.close();
}, 60_000);

test("a network error while quoting says the connection failed and offers a retry, not the browser's bare 'Failed to fetch'", async () => {
  const { shop } = await merchantWithPage("Offline Shop");
  const { context, frame } = await openWidget(shop, privateKeyToAccount(generatePrivateKey()));
  await toDrawStep(frame);
  let failures = 1;
  await context.route("**/quote", (route) => (failures-- > 0 ? route.abort("internetdisconnected") : route.continue()));
  await frame.getByLabel("Amount (USDC)").fill("100");
  const text = await stepError(frame, "draw");
  expect(text).toBe("Could not reach the service: check your connection and try again.");
  expect(text).not.toBe("Failed to fetch");
  expect(text).toMatch(/connect|network|try again/i);
  await context.close();
}, 60_000);

test("the hosted repay page of a loan not yet funded explains it in words, not the raw status enum", async () => {
  const { m } = await merchantWithPage("Unfunded Shop");
  expect((await m.api("/v1/sandbox/liquidity", { method: "PUT", json: { available: "0.00" } })).status).toBe(200);
  const borrower = evmBorrower();
  const post = embedPost(stack.embedUrl, m.embedKey);
  const drawn = await widgetCalls(post).draw(borrower, { amount: "100.00", tenureDays: 7 });
  expect(drawn.status).toBe(201);
  const context = await browser.newContext({ viewport: { width: 360, height: 740 } });
  const page = await context.newPage();
  await page.goto(`${stack.embedUrl}/embed/${m.embedKey}/repay/${drawn.body.loan.id}`);
  const text = (await page.locator("main").innerText()).trim();
  expect(text).toContain("This loan has not been funded yet, so there is nothing to repay.");
  expect(text).not.toMatch(/\b(CREATED|ACTIVE|DEFAULTED|AWAITING_LIQUIDITY)\b/);
  await context.close();
}, 60_000);

test("the wallet switching accounts before a draw stops the flow and says so; after the draw the loan's screen stays", async () => {
  const { shop } = await merchantWithPage("Switch Shop");
  const account = privateKeyToAccount(generatePrivateKey());
  const other = privateKeyToAccount(generatePrivateKey());
  const { context, page, frame, control } = await openWidget(shop, account);
  await toDrawStep(frame);
  await frame.getByLabel("Amount (USDC)").fill("100");
  await frame.getByTestId("total-due").waitFor();
  // The same account again (another letter case, as wallets report it at connect): nothing changes.
  expect(await emit(frame, "accountsChanged", [account.address.toLowerCase()])).toBeGreaterThan(0);
  expect(await frame.locator("[data-step=draw]").count()).toBe(1);
  // Another account: the quote, the line and the next signature were the first account's, so the flow stops.
  await emit(frame, "accountsChanged", [other.address]);
  const switched = frame.locator("[data-step=switched]");
  await switched.getByRole("heading", { name: "Your wallet switched accounts" }).waitFor();
  const text = await switched.innerText();
  expect(text).toContain(`${account.address.slice(0, 6)}…${account.address.slice(-4)}`);
  expect(text).toContain(`${other.address.slice(0, 6)}…${other.address.slice(-4)}`);
  expect(await frame.getByRole("button", { name: "Sign and borrow" }).count()).toBe(0);
  const signs = control.signs;
  // Start again: the widget reloads at the connect step.
  await switched.getByRole("button", { name: "Start again" }).click();
  const again = await widgetFrame(page, stack.embedUrl);
  await again.getByRole("button", { name: "Connect Audit Wallet" }).waitFor();
  expect(control.signs).toBe(signs);
  await context.close();

  // After the draw is signed the loan is the first account's: a switch leaves its status on screen.
  const second = await openWidget(shop, other);
  await toDrawStep(second.frame);
  await second.frame.getByLabel("Amount (USDC)").fill("50");
  await second.frame.getByTestId("total-due").waitFor();
  await second.frame.getByRole("button", { name: "Sign and borrow" }).click();
  await second.frame.getByRole("heading", { name: "Funds sent" }).waitFor({ timeout: 20_000 });
  await emit(second.frame, "accountsChanged", []);
  await emit(second.frame, "disconnect", {});
  expect(await second.frame.getByRole("heading", { name: "Funds sent" }).count()).toBe(1);
  expect(await second.frame.locator("[data-step=switched]").count()).toBe(0);
  await second.context.close();
}, 90_000);

test("the wallet disconnecting at the agreement step says so instead of asking it to sign", async () => {
  const { shop } = await merchantWithPage("Disconnect Shop");
  const { context, frame } = await openWidget(shop, privateKeyToAccount(generatePrivateKey()));
  await frame.getByRole("button", { name: "Connect Audit Wallet" }).click();
  await frame.getByLabel("I have read and accept the credit line agreement").waitFor();
  await emit(frame, "accountsChanged", []);
  await frame.getByRole("heading", { name: "Your wallet disconnected" }).waitFor();
  expect(await frame.getByRole("button", { name: "Continue" }).count()).toBe(0);
  await context.close();
}, 60_000);
