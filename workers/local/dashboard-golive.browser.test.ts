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
    await kyb.getByLabel("Document 1: file (stays on your computer)").setInputFiles({ name: "incorporation.pdf", mimeType: "application/pdf", buffer: Buffer.from("%PDF certificate") });
    await kyb.getByRole("button", { name: "Submit for verification" }).click();
    await kyb.locator('[data-field="country"] .field-error', { hasText: "country: must be an ISO 3166-1 alpha-2 country code" }).waitFor();
    expect(await kyb.getByLabel("Country").getAttribute("aria-invalid")).toBe("true");
    await kyb.getByLabel("Country").fill("DE");
    await kyb.getByRole("button", { name: "Submit for verification" }).click();
    await page.locator('[data-step="KYB_APPROVED"] .step-detail').filter({ hasText: /operator|review|decision/i }).waitFor();
    const tenants = (await stack.fetch("/v1/operator/tenants?limit=100", { headers: OPERATOR })).body.data as { id: string; kyb: any }[];
    const submitted = tenants.find((t) => t.id === owner.tenantId)!;
    expect(submitted.kyb).toMatchObject({ status: "SUBMITTED", legalName: "Go Live Walk Ltd", country: "DE", documents: [{ fileName: "incorporation.pdf" }] });
    expect(submitted.kyb.documents[0].sha256).toBe(new Bun.CryptoHasher("sha256").update("%PDF certificate").digest("hex"));
    expect((await stack.fetch(`/v1/operator/tenants/${owner.tenantId}/kyb`, { json: { decision: "APPROVED", note: "documents fine" }, headers: OPERATOR })).status).toBe(200);
    await reopen(1);
    expect(await page.getByRole("form", { name: "Business verification" }).count()).toBe(0);

    // Step 2: commercial terms by the operator; 3 and 4 (policy, product) were done at signup.
    expect((await stack.fetch(`/v1/operator/tenants/${owner.tenantId}/commercial-terms`, { json: { reference: "MSA-14" }, headers: OPERATOR })).status).toBe(201);
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
    await page.locator(".wallet", { hasText: account.address }).getByText(/^Proven /).waitFor();
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
