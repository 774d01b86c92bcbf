import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { MERCHANT_CONFIG_EXAMPLE } from "../api/openapi-examples.ts";
import { launchBrowser } from "./browser.ts";
import { expectAccessible, goTo, logInInBrowser, openDashboard, rendered, screenshot, visit, WIDTHS } from "./dashboard/dashboard-harness.ts";
import { signUpMerchant, startTestStack, type TestStack } from "./integration.ts";
import { evmBorrower, widgetCalls } from "../../shared/testing/widget-borrower.ts";

/**
 * The dashboard's loan pages in Debian's Chromium against the real workers
 * (issue 14, "Loans", "Review queue", "Borrowers", "Settlements"): a loan
 * created through the API appears in the list; a declined one under
 * DECLINED; a MANUAL_REVIEW loan approved from the review queue leaves it
 * and its timeline shows `loan.approved` then `loan.funded`; a borrower's
 * KYC set from the dashboard lands in its audit trail; a MEMBER sees no
 * action; a screenshot of each page, and axe at 360 and 1280 px.
 */
const PASSWORD = "correct horse battery staple";
let stack: TestStack;
let browser: Browser;
let m: Awaited<ReturnType<typeof signUpMerchant>>;
let memberEmail: string;
const loans: { active: any; declined: any; waiting: any; forAxe: any; drawn: any } = {} as never;
const newWallet = () => privateKeyToAccount(generatePrivateKey()).address;

beforeAll(async () => {
  [stack, browser] = await Promise.all([startTestStack(), launchBrowser()]);
  m = await signUpMerchant(stack, "Loans Dashboard");
  const blocked = newWallet();
  const policy = await m.api("/v1/policies", {
    method: "PUT",
    json: { requireKycVerified: false, manualReviewAbove: "50.00", maxOpenLoansPerBorrower: null, blockedWallets: [blocked] },
  });
  expect(policy.status).toBe(200);
  let n = 0;
  const create = async (over: Record<string, unknown>) => {
    const res = await m.api("/v1/loans", {
      json: {
        loanProductId: m.loanProductId,
        borrowerRef: `shopper-${++n}`,
        borrowerWalletAddress: newWallet(),
        chain: "POLYGON_AMOY",
        principalAmount: "40.00",
        idempotencyKey: `order-${crypto.randomUUID()}`,
        ...over,
      },
    });
    expect(res.status).toBe(201);
    return res.body;
  };
  loans.active = await create({});
  loans.declined = await create({ borrowerWalletAddress: blocked });
  loans.waiting = await create({ principalAmount: "75.00" });
  loans.forAxe = await create({ principalAmount: "80.00" }); // stays in the queue for the axe runs
  // A loan drawn through the widget program (below 50.00: no review): its hosted repayment page is the program's.
  const widget = widgetCalls((path, json) => stack.fetch(`/v1/embed/${m.embedKey}${path}`, { json }));
  const drawn = await widget.draw(evmBorrower(), { amount: "30.00", tenureDays: 7 });
  expect(drawn.status).toBe(201);
  loans.drawn = drawn.body.loan;
  expect([loans.active.status, loans.declined.derivedStatus, loans.waiting.decision.outcome, loans.drawn.status]).toEqual([
    "ACTIVE",
    "DECLINED",
    "MANUAL_REVIEW",
    "ACTIVE",
  ]);
  memberEmail = `member.${Date.now()}@merchant.example`;
  expect((await m.dashboard("/v1/users", { json: { email: memberEmail, password: PASSWORD, role: "MEMBER" } })).status).toBe(201);
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await stack?.dispose();
});

async function signedIn(email = m.email, width = 1280): Promise<Page> {
  const page = await openDashboard(browser, stack, width);
  await logInInBrowser(page, email, PASSWORD);
  return page;
}

const loanRow = (page: Page, id: string) => page.getByRole("link", { name: `Loan ${id}` });

describe("dashboard: loans", () => {
  test("a loan created through the API appears in the list and links to its page; DECLINED and the wallet search filter it", async () => {
    const page = await signedIn();
    await goTo(page, "Loans");
    await loanRow(page, loans.active.id).waitFor();
    expect(await loanRow(page, loans.declined.id).count()).toBe(1);
    await screenshot(page, "loans");

    await page.getByLabel("Status").selectOption("DECLINED");
    await rendered(page, () => page.getByRole("button", { name: "Apply filters" }).click());
    expect(page.url()).toContain("status=DECLINED");
    await loanRow(page, loans.declined.id).waitFor();
    expect(await loanRow(page, loans.active.id).count()).toBe(0);
    expect(await page.getByRole("cell", { name: "DECLINED", exact: true }).count()).toBe(1);
    await screenshot(page, "loans-declined");

    await rendered(page, () => page.getByRole("link", { name: "Clear filters" }).click());
    expect(page.url()).toBe(`${stack.baseUrl}/dashboard/loans`);
    await loanRow(page, loans.active.id).waitFor();
    await page.getByLabel("Wallet").fill(loans.active.borrowerWalletAddress.toLowerCase());
    await rendered(page, () => page.getByRole("button", { name: "Apply filters" }).click());
    expect(page.url()).toContain("borrowerWalletAddress=");
    await loanRow(page, loans.active.id).waitFor();
    expect(await page.locator("tbody tr").count()).toBe(1);

    await rendered(page, () => loanRow(page, loans.active.id).click(), "Loan");
    expect(page.url()).toBe(`${stack.baseUrl}/dashboard/loans/${loans.active.id}`);
    await page.getByRole("heading", { name: "Timeline" }).waitFor();
    expect(await page.locator("ol.timeline li").evaluateAll((lis) => lis.map((li) => li.getAttribute("data-event")))).toEqual([
      "loan.application_submitted",
      "loan.decision",
      "loan.funded",
    ]);
    await page.getByRole("cell", { name: "FUNDING" }).waitFor();
    expect(await page.getByText(loans.active.fundingTxHash).count()).toBeGreaterThan(0);
    // A loan made through the API has no hosted page (a program's embed key reaches only its own loans): the repayment details.
    await page.getByRole("region", { name: "Repayment details" }).waitFor();
    expect(await page.getByRole("region", { name: "Repayment details" }).textContent()).toContain(`POST /v1/loans/${loans.active.id}/repay`);
    expect(await page.getByTestId("repay-link").count()).toBe(0);
    await screenshot(page, "loan");

    // A widget loan: the hosted repayment page of its program, on the widget host the dashboard is configured with, and it is there.
    // Through the app's own navigation (a reload would drop the session the page holds in memory).
    await rendered(
      page,
      () =>
        page.evaluate(
          `(() => { const a = document.createElement("a"); a.href = "/dashboard/loans/${loans.drawn.id}"; document.body.append(a); a.click(); a.remove(); })()`,
        ),
      "Loan",
    );
    const { widgetOrigin } = JSON.parse((await page.locator("#dashboard-config").textContent())!) as { widgetOrigin: string };
    expect(widgetOrigin).toMatch(/^https?:\/\//);
    await page.getByTestId("repay-link").waitFor();
    const link = await page.getByTestId("repay-link").textContent();
    expect(link).toBe(`${widgetOrigin}/embed/${m.embedKey}/repay/${loans.drawn.id}`);
    expect(await page.getByRole("button", { name: "Copy repayment link" }).count()).toBe(1);
    // The page it names is served (the configured widget host is the local embed worker here).
    expect((await fetch(`${stack.embedUrl}${new URL(link!).pathname}`)).status).toBe(200);
  }, 60_000);

  test("a MANUAL_REVIEW loan is approved from the review queue with a note, leaves it, and its timeline shows loan.approved then loan.funded", async () => {
    const page = await signedIn();
    await goTo(page, "Review queue");
    const form = page.getByRole("form", { name: `Review loan ${loans.waiting.id}` });
    await form.waitFor();
    await screenshot(page, "review");
    await form.getByLabel("Review note").fill("income checked by phone");
    await rendered(page, () => form.getByRole("button", { name: "Approve" }).click());
    await page.getByText(`Loan ${loans.waiting.id} approved.`).waitFor();
    expect(await loanRow(page, loans.waiting.id).count()).toBe(0);
    expect(await loanRow(page, loans.forAxe.id).count()).toBe(1);

    await visit(page, `/loans/${loans.waiting.id}`, "Loan");
    const events = await page.locator("ol.timeline li").evaluateAll((lis) => lis.map((li) => li.getAttribute("data-event")));
    expect(events).toEqual(["loan.application_submitted", "loan.decision", "loan.approved", "loan.funded"]);
    await page.getByText("income checked by phone").waitFor();
    expect(await page.getByRole("form", { name: `Review loan ${loans.waiting.id}` }).count()).toBe(0);
    const api = await m.api(`/v1/loans/${loans.waiting.id}`);
    expect(api.body).toMatchObject({ status: "ACTIVE", decision: { outcome: "APPROVED", reviewNote: "income checked by phone", reviewedBy: m.ownerUserId } });
  }, 60_000);

  test("a borrower found by ref: KYC set by the owner lands in the audit trail; settlements list the funding", async () => {
    const page = await signedIn();
    await goTo(page, "Borrowers");
    await page.getByRole("link", { name: loans.active.borrowerRef }).first().waitFor();
    await screenshot(page, "borrowers");
    await page.getByLabel("Borrower ref or id").fill(loans.active.borrowerRef);
    await rendered(page, () => page.getByRole("button", { name: "Find" }).click(), "Borrower");
    expect(await page.getByTestId("kyc-status").textContent()).toBe("PENDING");
    await page.getByLabel("KYC status").selectOption("VERIFIED");
    await page.getByLabel("Checked by").fill("kyc-ops-7");
    await rendered(page, () => page.getByRole("button", { name: "Save KYC status" }).click());
    expect(await page.getByTestId("kyc-status").textContent()).toBe("VERIFIED");
    await page.getByRole("cell", { name: "kyc-ops-7" }).waitFor();
    expect(await page.getByRole("cell", { name: `user:${m.ownerUserId}` }).count()).toBe(1);
    await screenshot(page, "borrower");
    const api = await m.api(`/v1/borrowers/${encodeURIComponent(loans.active.borrowerRef)}`);
    expect(api.body.kyc).toMatchObject({ status: "VERIFIED", merchantUserId: "kyc-ops-7" });

    await goTo(page, "Settlements");
    await page.getByRole("link", { name: `Loan ${loans.active.id}` }).waitFor();
    expect(await page.getByRole("cell", { name: "FUNDING" }).count()).toBeGreaterThanOrEqual(2); // the active and the approved loan
    await screenshot(page, "settlements");
  }, 60_000);

  test("an unmatched payment (a TON transfer with a wrong comment) is attributed to its loan from Settlements; a bad loan id gets the API's message beside the field", async () => {
    const config = await m.dashboard("/v1/merchant-configs", { json: { ...MERCHANT_CONFIG_EXAMPLE, network: "TON", stablecoin: "USDT" } });
    expect(config.status).toBe(201);
    expect((await m.api("/v1/sandbox/liquidity", { method: "PUT", json: { available: "1000.00", stablecoin: "USDT" } })).status).toBe(200);
    const borrower = `0:${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}`;
    const created = await m.api("/v1/loans", {
      json: {
        loanProductId: config.body.loanProductId,
        borrowerRef: "ton-shopper",
        borrowerWalletAddress: borrower,
        chain: "TON_TESTNET",
        principalAmount: "40.00",
        idempotencyKey: `order-${crypto.randomUUID()}`,
      },
    });
    expect(created.body).toMatchObject({ status: "ACTIVE", totalDue: "40.80" });
    expect((await m.api("/v1/sandbox/chain/faucet", { json: { chain: "TON_TESTNET", address: borrower, amount: "50.00" } })).status).toBe(200);
    const instructions = (await m.api(`/v1/loans/${created.body.id}/repay`, { method: "POST", json: {} })).body;
    const wrong = await m.api("/v1/sandbox/chain/transfers", {
      json: { chain: "TON_TESTNET", from: borrower, to: instructions.to, amount: instructions.amount, comment: "for my loan" },
    });
    expect(wrong.body.status).toBe("success");

    const page = await signedIn();
    await goTo(page, "Settlements");
    const form = page.getByRole("form", { name: `Attribute payment ${wrong.body.txHash}` });
    await form.waitFor();
    // The sender's comment is set apart from the service's reason, in its own left-to-right code element.
    const comment = page.locator('code.mono[dir="ltr"]', { hasText: "for my loan" });
    await comment.waitFor();
    expect(await comment.textContent()).toBe("for my loan");
    await form.getByLabel("Loan id").fill("not-a-loan");
    await form.getByRole("button", { name: "Attribute" }).click();
    await form.locator('[data-field="loanId"] .field-error').getByText(/uuid/i).waitFor();
    expect(await form.getByLabel("Loan id").getAttribute("aria-invalid")).toBe("true");
    await screenshot(page, "settlements-unmatched");
    // The attribution form with its error passes axe too, at both widths.
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      await expectAccessible(page, `settlements-unmatched@${width}`);
    }

    await form.getByLabel("Loan id").fill(created.body.id);
    await rendered(page, () => form.getByRole("button", { name: "Attribute" }).click());
    expect(await page.getByRole("form", { name: `Attribute payment ${wrong.body.txHash}` }).count()).toBe(0); // open ones only
    expect((await m.api(`/v1/loans/${created.body.id}`)).body).toMatchObject({ status: "REPAID", amountPaid: "40.80" });
    await rendered(page, () => page.getByRole("link", { name: "Show attributed ones too" }).click());
    await page
      .getByRole("link", { name: `Loan ${created.body.id}` })
      .first()
      .waitFor();
  }, 60_000);

  test("a MEMBER sees the queue, the loan and the borrower without any action", async () => {
    const page = await signedIn(memberEmail);
    await goTo(page, "Review queue");
    await loanRow(page, loans.forAxe.id).waitFor();
    expect(await page.getByRole("button", { name: "Approve" }).count()).toBe(0);
    await visit(page, `/loans/${loans.forAxe.id}`, "Loan");
    await page.getByText("An Owner or Admin approves or rejects this loan.").waitFor();
    expect(await page.getByRole("button", { name: /Approve|Reject/ }).count()).toBe(0);
    await visit(page, `/borrowers/${encodeURIComponent(loans.active.borrowerRef)}`, "Borrower");
    await page.getByRole("heading", { name: "KYC audit trail" }).waitFor();
    expect(await page.getByRole("button", { name: "Save KYC status" }).count()).toBe(0);
  }, 60_000);

  test.each(WIDTHS)(
    "loans, a loan, the review queue, borrowers, a borrower and settlements have no axe violations at %i px",
    async (width) => {
      const page = await signedIn(m.email, width);
      const pages: [string, string, string][] = [
        ["/loans", "Loans", "loans"],
        [`/loans/${loans.active.id}`, "Loan", "loan-active"],
        [`/loans/${loans.forAxe.id}`, "Loan", "loan-review"],
        ["/review", "Review queue", "review"],
        ["/borrowers", "Borrowers", "borrowers"],
        [`/borrowers/${encodeURIComponent(loans.active.borrowerRef)}`, "Borrower", "borrower"],
        ["/settlements", "Settlements", "settlements"],
      ];
      for (const [path, heading, label] of pages) {
        await visit(page, path, heading);
        await expectAccessible(page, `${label}@${width}`);
      }
    },
    60_000,
  );
});
