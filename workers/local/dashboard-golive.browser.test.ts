import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { type AnvilNode, deployRehearsalContracts, mintUsdc, type RehearsalDeployment, startAnvil } from "../../shared/chains/evm/testing/anvil.ts";
import { launchBrowser, servePage } from "./browser.ts";
import { expectAccessible, goTo, logInInBrowser, openDashboard, screenshot, signUpInBrowser, WIDTHS } from "./dashboard/dashboard-harness.ts";
import { apiSession, OPERATOR, sandboxLoanRepaid, shownStatuses, statusesAfter } from "./dashboard/golive-fixtures.ts";
import { installInjectedWallet } from "./injected-wallet.ts";
import { signUpMerchant, startTestStack, type TestStack } from "./integration.ts";

/**
 * The dashboard's Home and Go live pages in Debian's Chromium against the
 * real workers, with Anvil as the live POLYGON chain (step 5 reads the
 * DISBURSEMENT wallet's balance from it): the checklist walked in the page up
 * to certification, Home's next things and numbers, a MEMBER's read-only
 * view and refused forged writes, and a cross-site form post refused.
 */
let stack: TestStack;
let browser: Browser;
let node: AnvilNode;
let deployment: RehearsalDeployment;
beforeAll(async () => {
  const chain = (async () => {
    node = await startAnvil({ chainId: 137 });
    deployment = await deployRehearsalContracts(node);
  })();
  browser = await launchBrowser();
  await chain;
  stack = await startTestStack({ vars: { POLYGON_RPC_URL: node.rpcUrl, POLYGON_TOKEN_ADDRESS: deployment.usdc, POLYGON_POOL_ADDRESS: deployment.pool } });
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await stack?.dispose();
  await node?.stop();
});

/** Runs `action` and waits until the page was rendered anew (the same page's heading is there before and after). */
async function rerendered(page: Page, action: () => Promise<void>): Promise<void> {
  await page.locator("#page-title").evaluate((h) => h.setAttribute("data-stale", ""));
  await action();
  await page.locator("#page-title:not([data-stale])").waitFor();
}

describe("dashboard: go live", () => {
  test("the Go live page walks the checklist in order, each step turning DONE in the page, up to certification; then the mode switch appears", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const account = privateKeyToAccount(generatePrivateKey());
    const wallet = await installInjectedWallet(context, { account, chainId: 137, sendRawTransaction: async () => "0x" });
    const page = await context.newPage();
    await page.goto(`${stack.baseUrl}/dashboard`);
    const { email, password } = await signUpInBrowser(page, "Go Live Walk");
    const owner = await apiSession(stack, email, password);
    const reopen = async (done: number) => {
      await rerendered(page, () => goTo(page, "Go live"));
      expect(await shownStatuses(page)).toEqual(statusesAfter(done));
    };
    await reopen(0);
    expect(await page.locator('[data-status="PENDING"]').getAttribute("data-step")).toBe("KYB_APPROVED");
    await screenshot(page, "go-live-new");

    // Certify before the steps are done: the API's 409 message, in the page.
    await page.getByRole("button", { name: "Certify for live" }).click();
    await page.getByRole("alert").filter({ hasText: /KYB/ }).first().waitFor();

    // Step 1: KYB submitted in the page (a bad country first: the API's message beside the field), approved by the operator.
    const kyb = page.getByRole("form", { name: "Business verification" });
    await kyb.getByLabel("Legal name").fill("Go Live Walk Ltd");
    await kyb.getByLabel("Registration number").fill("HRB 42");
    await kyb.getByLabel("Country").fill("XX");
    await kyb
      .getByLabel("Document 1: file (stays on your computer)")
      .setInputFiles({ name: "incorporation.pdf", mimeType: "application/pdf", buffer: Buffer.from("%PDF certificate") });
    await kyb.getByRole("button", { name: "Submit for verification" }).click();
    await kyb.locator('[data-field="country"] .field-error', { hasText: "country: must be an ISO 3166-1 alpha-2 country code" }).waitFor();
    expect(await kyb.getByLabel("Country").getAttribute("aria-invalid")).toBe("true");
    await kyb.getByLabel("Country").fill("DE");
    await kyb.getByRole("button", { name: "Submit for verification" }).click();
    await page
      .locator('[data-step="KYB_APPROVED"] .step-detail')
      .filter({ hasText: /operator|review|decision/i })
      .waitFor();
    const tenants = (await stack.fetch("/v1/operator/tenants?limit=100", { headers: OPERATOR })).body.data as { id: string; kyb: any }[];
    const submitted = tenants.find((t) => t.id === owner.tenantId)!;
    expect(submitted.kyb).toMatchObject({ status: "SUBMITTED", legalName: "Go Live Walk Ltd", country: "DE", documents: [{ fileName: "incorporation.pdf" }] });
    expect(submitted.kyb.documents[0].sha256).toBe(new Bun.CryptoHasher("sha256").update("%PDF certificate").digest("hex"));
    expect(
      (await stack.fetch(`/v1/operator/tenants/${owner.tenantId}/kyb`, { json: { decision: "APPROVED", note: "documents fine" }, headers: OPERATOR })).status,
    ).toBe(200);
    await reopen(1);
    expect(await page.getByRole("form", { name: "Business verification" }).count()).toBe(0);

    // Step 2: commercial terms by the operator; 3 and 4 (policy, product) were done at signup.
    expect((await stack.fetch(`/v1/operator/tenants/${owner.tenantId}/commercial-terms`, { json: { reference: "MSA-14" }, headers: OPERATOR })).status).toBe(
      201,
    );
    await reopen(4);
    await expect(page.getByRole("table", { name: /operator action/ }).textContent()).resolves.toContain("MSA-14");

    // Step 5: a DISBURSEMENT wallet added in the page, holding USDC on the chain, control proven with the browser wallet.
    await mintUsdc(node, deployment, account.address, 1_000_000_000n);
    const add = page.getByRole("form", { name: "Add a wallet" });
    await add.getByLabel("Chain").selectOption("POLYGON");
    await add.getByLabel("Role").selectOption("DISBURSEMENT");
    await add.getByLabel("Address").fill(account.address);
    await add.getByRole("button", { name: "Add wallet" }).click();
    const item = page.locator(".wallet", { hasText: account.address });
    await item.getByText("Not proven").waitFor();
    await expect(item.textContent()).resolves.toContain("1000");
    await item.getByRole("button", { name: "Prove control" }).click();
    await page
      .locator(".wallet", { hasText: account.address })
      .getByText(/^Proven /)
      .waitFor();
    expect(wallet.calls.map((c) => c.method)).toEqual(["eth_requestAccounts", "personal_sign"]);
    expect(await shownStatuses(page)).toEqual(statusesAfter(5));

    // Steps 6 to 10: a webhook and an API key (the Developers page's, here through the API), the owner and branding from signup, a sandbox loan funded and repaid.
    // A local receiver: tests never reach the network.
    const receiver = servePage(() => new Response("ok"));
    expect((await owner.call("/v1/webhooks", { url: `${receiver.origin}/hooks`, events: ["*"] })).status).toBe(201);
    await reopen(6);
    const key = await owner.call("/v1/api-keys", { name: "backend" });
    expect(key.status).toBe(201);
    await reopen(9);
    await sandboxLoanRepaid(stack, key.body.key, owner.loanProductId);
    await reopen(10);
    await screenshot(page, "go-live-ready");

    await page.getByRole("button", { name: "Certify for live" }).click();
    await page.getByText(/^Certified for live since /).waitFor();
    await page.getByRole("group", { name: "Mode" }).waitFor();
    expect((await owner.call("/v1/go-live")).body).toMatchObject({ mode: "live", certifiedAt: expect.any(String), nextStep: null });
    await screenshot(page, "go-live-certified");
    receiver.close();
    await context.close();
  }, 90_000);
});

describe("dashboard: live wallets", () => {
  test("a GAS wallet's threshold: the API's message beside the field, then saved; a wallet deleted after a second click; TON asks for the signData reply", async () => {
    const m = await signUpMerchant(stack, "Wallet Admin");
    const address = privateKeyToAccount(generatePrivateKey()).address;
    expect((await m.dashboard("/v1/wallets", { json: { chain: "POLYGON", role: "GAS", address } })).status).toBe(201);
    const page = await openDashboard(browser, stack);
    await logInInBrowser(page, m.email, "correct horse battery staple");
    await goTo(page, "Go live");
    const threshold = page.getByRole("form", { name: `Gas alert threshold of ${address}` });
    await threshold.getByLabel("Alert when under (POL)").fill("-1");
    await threshold.getByRole("button", { name: "Save threshold" }).click();
    await threshold.locator('[data-field="gasThreshold"] .field-error', { hasText: /^gasThreshold: / }).waitFor();
    await threshold.getByLabel("Alert when under (POL)").fill("0.5");
    await threshold.getByRole("button", { name: "Save threshold" }).click();
    await page.locator(".wallet", { hasText: address }).getByText("0.5 POL", { exact: true }).waitFor();
    expect((await m.dashboard("/v1/wallets")).body.data[0]).toMatchObject({ address, gasThreshold: "0.5" });

    // TON: the challenge to sign with a TON Connect wallet, and the reply's fields to paste (a wrong signature: the API's message).
    const add = page.getByRole("form", { name: "Add a wallet" });
    await add.getByLabel("Chain").selectOption("TON");
    await add.getByLabel("Role").selectOption("COLLECTIONS");
    await add.getByLabel("Address").fill(`0:${"ab".repeat(32)}`);
    await add.getByRole("button", { name: "Add wallet" }).click();
    const ton = page.locator(".wallet", { hasText: "TON COLLECTIONS" });
    await ton.getByRole("button", { name: "Prove control" }).click();
    await ton.getByText(/TON proof needs a TON Connect wallet/).waitFor();
    await expect(ton.locator("pre").textContent()).resolves.toContain("0:abab");
    await ton.getByLabel("Signature (base64)").fill(Buffer.alloc(64).toString("base64"));
    await ton.getByLabel("Public key").fill("00".repeat(32));
    await ton.getByLabel("Timestamp (Unix seconds)").fill(String(Math.floor(Date.now() / 1000)));
    await ton.getByLabel("Domain").fill("embed.example");
    await ton.getByRole("button", { name: "Verify the signature" }).click();
    // The API checks the reply, field by field: here the domain, beside its field.
    await ton.locator('[data-field="domain"] .field-error', { hasText: "domain: is not an allowed TON Connect domain" }).waitFor();
    expect((await m.dashboard("/v1/wallets")).body.data.find((w: { chain: string }) => w.chain === "TON")).toMatchObject({ controlVerified: false });
    await screenshot(page, "go-live-wallets");

    const gas = page.locator(".wallet", { hasText: address });
    await gas.getByRole("button", { name: "Delete wallet" }).click();
    await gas.getByRole("button", { name: "Click again to delete" }).click();
    await page.locator(".wallet", { hasText: address }).waitFor({ state: "detached" });
    expect((await m.dashboard("/v1/wallets")).body.data.map((w: { chain: string }) => w.chain)).toEqual(["TON"]);
  }, 60_000);
});

describe("dashboard: home", () => {
  test("Home says what to do next (the go-live step, unread notifications, loans awaiting review, a liquidity warning) and the day's numbers", async () => {
    const m = await signUpMerchant(stack, "Home Numbers");
    // Two funded loans of 100.00 and 250.00, then one over the manual review limit, with the pool's low threshold above what is left.
    expect((await m.api("/v1/sandbox/liquidity", { json: { available: "5000.00", lowThreshold: "4800.00" }, method: "PUT" })).status).toBe(200);
    const loan = (principalAmount: string) =>
      m.api("/v1/loans", {
        json: {
          loanProductId: m.loanProductId,
          borrowerRef: `home-${principalAmount}`,
          borrowerWalletAddress: privateKeyToAccount(generatePrivateKey()).address,
          chain: "POLYGON_AMOY",
          principalAmount,
          idempotencyKey: `home-${principalAmount}-${Date.now()}`,
        },
      });
    expect((await loan("100.00")).body.status).toBe("ACTIVE");
    expect((await loan("250.00")).body.status).toBe("ACTIVE");
    const policy = { requireKycVerified: false, manualReviewAbove: "300.00", maxOpenLoansPerBorrower: null, blockedWallets: [] };
    expect((await m.api("/v1/policies", { json: policy, method: "PUT" })).status).toBe(200);
    expect((await loan("400.00")).body.decision.outcome).toBe("MANUAL_REVIEW");

    const page = await openDashboard(browser, stack);
    await logInInBrowser(page, m.email, "correct horse battery staple");
    await page.getByRole("heading", { level: 1, name: "Home" }).waitFor();
    await expect(page.locator('[data-step="KYB_APPROVED"]').textContent()).resolves.toContain("Go live, step 1 of 10");
    await expect(page.locator('[data-item="review"]').textContent()).resolves.toContain("1 loan awaiting review.");
    await expect(page.locator('[data-item="unread"]').textContent()).resolves.toMatch(/\d+ unread notifications?\./);
    await expect(page.locator('[data-item="warnings"]').textContent()).resolves.toContain("Liquidity is running low");
    const stat = (key: string) => page.locator(`[data-stat="${key}"] .value`).textContent();
    expect(await Promise.all(["created", "funded", "repaid", "overdue", "defaulted"].map(stat))).toEqual(["3", "2", "0", "0", "0"]);
    expect(await stat("lentUSDC")).toBe("350.00");
    const owed = (await m.api("/v1/stats/today")).body.amounts[0].outstanding as string;
    expect(await stat("outstandingUSDC")).toBe(`${owed.split(".")[0]}.${owed.split(".")[1]!.slice(0, 2)}`);
    await screenshot(page, "home-numbers");

    // The next step's link opens the checklist; the review link the queue.
    await page.locator('[data-step="KYB_APPROVED"]').getByRole("link", { name: "Open the checklist" }).click();
    await page.getByRole("heading", { level: 1, name: "Go live" }).waitFor();
    expect(page.url()).toBe(`${stack.baseUrl}/dashboard/go-live`);
  }, 60_000);
});

describe("dashboard: a MEMBER reads, never writes; no cross-site writes", () => {
  test("a MEMBER logged in through the form sees no write action on Home and Go live; its forged writes are refused 403", async () => {
    const m = await signUpMerchant(stack, "Member View");
    // A wallet to show, so its actions would be there for an owner.
    const gas = privateKeyToAccount(generatePrivateKey()).address;
    expect((await m.dashboard("/v1/wallets", { json: { chain: "POLYGON", role: "GAS", address: gas } })).status).toBe(201);
    const email = `member.${Date.now()}@merchant.example`;
    const password = "member horse battery staple";
    expect((await m.dashboard("/v1/users", { json: { email, password, role: "MEMBER" } })).status).toBe(201);

    const page = await openDashboard(browser, stack);
    await logInInBrowser(page, email, password);
    // The page's own content (the frame's e-mail banner, "Send the link again", is the member's own and not this page's).
    const buttons = () => page.locator("section.page").locator("button, input, select, textarea, form").count();
    await page.getByRole("heading", { level: 1, name: "Home" }).waitFor();
    expect(await buttons()).toBe(0);
    await goTo(page, "Go live");
    await page.locator(".wallet", { hasText: gas }).waitFor();
    expect(await buttons()).toBe(0);
    await expect(page.locator("section.page").textContent()).resolves.toContain("The account owner certifies");
    await screenshot(page, "go-live-member");

    // A forged write from the MEMBER's session (its token, as a script in its tab could send it): 403 for each.
    const member = await apiSession(stack, email, password);
    const wallet = (await m.dashboard("/v1/wallets")).body.data[0].id as string;
    const forged = await page.evaluate(
      async ({ token, wallet }) => {
        const writes: [string, string, unknown][] = [
          ["POST", "/v1/api-keys", { name: "forged" }],
          ["POST", "/v1/go-live/kyb", { legalName: "X", registrationNumber: "1", country: "DE", documents: [] }],
          ["POST", "/v1/go-live/certify", {}],
          ["POST", "/v1/wallets", { chain: "POLYGON", role: "DISBURSEMENT", address: "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045" }],
          ["PUT", `/v1/wallets/${wallet}`, { gasThreshold: "1" }],
          ["DELETE", `/v1/wallets/${wallet}`, undefined],
        ];
        return Promise.all(
          writes.map(async ([method, path, body]) => {
            const headers: Record<string, string> = { authorization: `Bearer ${token}` };
            if (body !== undefined) headers["content-type"] = "application/json";
            const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
            return { path: `${method} ${path}`, status: res.status, body: await res.json() };
          }),
        );
      },
      { token: member.token, wallet },
    );
    for (const res of forged) expect(res).toMatchObject({ status: 403, body: { statusCode: 403, error: "Forbidden" } });
    const keys = (await m.dashboard("/v1/api-keys")).body.data as { name: string }[];
    expect(keys.map((k) => k.name)).not.toContain("forged");
    expect((await m.dashboard(`/v1/wallets/${wallet}`)).body).toMatchObject({ gasThreshold: null });
  }, 60_000);

  test("a cross-site form post to the API or the dashboard, while the owner is logged in in another tab, creates nothing", async () => {
    const m = await signUpMerchant(stack, "Cross Site");
    const context = await browser.newContext();
    const dashboard = await context.newPage();
    await dashboard.goto(`${stack.baseUrl}/dashboard`);
    await logInInBrowser(dashboard, m.email, "correct horse battery staple");
    const keysBefore = (await m.dashboard("/v1/api-keys")).body.data.length as number;

    // text/plain forms can carry a JSON-looking body without a preflight: the classic CSRF shape.
    const attacker = servePage(`<!doctype html><title>attacker</title>
<iframe name="api" title="api"></iframe><iframe name="dash" title="dash"></iframe>
<form id="api" method="post" action="${stack.baseUrl}/v1/api-keys" target="api" enctype="text/plain"><input name='{"name":"csrf","x":"' value='"}'></form>
<form id="dash" method="post" action="${stack.baseUrl}/dashboard" target="dash"><input name="name" value="csrf"></form>
<script>document.getElementById("api").submit(); document.getElementById("dash").submit();</script>`);
    const evil = await context.newPage();
    const answers = Promise.all(
      ["/v1/api-keys", "/dashboard"].map((path) => evil.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname === path)),
    );
    await evil.goto(attacker.origin);
    const [api, page] = await answers;
    // No ambient credential exists (the session's token lives in the dashboard tab's memory): the API answers 401.
    expect(api!.status()).toBe(401);
    expect(await api!.json()).toMatchObject({ statusCode: 401, error: "Unauthorized" });
    // The dashboard takes no POST at all.
    expect(page!.status()).toBeGreaterThanOrEqual(400);
    expect((await m.dashboard("/v1/api-keys")).body.data.length).toBe(keysBefore);
    // The merchant's own tab is untouched and still signed in.
    await goTo(dashboard, "Go live");
    attacker.close();
    await context.close();
  }, 60_000);
});

describe("dashboard: Home and Go live are accessible", () => {
  test.each(WIDTHS)(
    "no axe violations on Home and Go live (with a wallet listed) at %i px",
    async (width) => {
      const m = await signUpMerchant(stack, `Axe Go Live ${width}`);
      for (const role of ["GAS", "DISBURSEMENT"])
        expect(
          (await m.dashboard("/v1/wallets", { json: { chain: "POLYGON", role, address: privateKeyToAccount(generatePrivateKey()).address } })).status,
        ).toBe(201);
      const page = await openDashboard(browser, stack, width);
      await logInInBrowser(page, m.email, "correct horse battery staple");
      await page.getByRole("heading", { level: 1, name: "Home" }).waitFor();
      await page.locator('[data-stat="created"]').waitFor();
      await expectAccessible(page, `home@${width}`);
      await screenshot(page, `home@${width}`);
      await goTo(page, "Go live");
      await page.locator(".wallet").nth(1).waitFor();
      await expectAccessible(page, `go-live@${width}`);
      await screenshot(page, `go-live@${width}`);
    },
    60_000,
  );
});
