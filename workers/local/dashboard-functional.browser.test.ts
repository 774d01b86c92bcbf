import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { evmBorrower, widgetCalls } from "../../shared/testing/widget-borrower.ts";
import { launchBrowser, servePage } from "./browser.ts";
import { goTo, logInInBrowser, rendered, visit } from "./dashboard/dashboard-harness.ts";
import { signUpMerchant, startTestStack, type TestStack } from "./integration.ts";

/**
 * The dashboard's pages agree with the API and with each other (a functional
 * audit's findings, each failing before its fix). One stack for the file.
 */
const PASSWORD = "correct horse battery staple";
let stack: TestStack;
let browser: Browser;
beforeAll(async () => {
  [stack, browser] = await Promise.all([startTestStack(), launchBrowser()]);
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await stack?.dispose();
});

const newWallet = () => privateKeyToAccount(generatePrivateKey()).address;

async function signedIn(email: string, width = 1280, timezoneId?: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height: 900 }, timezoneId });
  const page = await context.newPage();
  await page.goto(`${stack.baseUrl}/dashboard`);
  await logInInBrowser(page, email, PASSWORD);
  return page;
}

type Merchant = Awaited<ReturnType<typeof signUpMerchant>>;
const sandboxLoan = (m: Merchant, over: Record<string, unknown> = {}) =>
  m.api("/v1/loans", {
    json: {
      loanProductId: m.loanProductId,
      borrowerRef: `shopper-${crypto.randomUUID().slice(0, 6)}`,
      borrowerWalletAddress: newWallet(),
      chain: "POLYGON_AMOY",
      principalAmount: "40.00",
      idempotencyKey: crypto.randomUUID(),
      ...over,
    },
  });

/** A policy that sends loans above 50.00 to manual review (and requires no KYC). */
async function reviewAbove50(m: Merchant): Promise<void> {
  const put = await m.api("/v1/policies", {
    method: "PUT",
    json: { requireKycVerified: false, manualReviewAbove: "50.00", maxOpenLoansPerBorrower: null, blockedWallets: [] },
  });
  expect(put.status).toBe(200);
}

/** Marks the tenant certified in the database (the go-live walk itself is covered by dashboard-golive.browser.test.ts). */
async function certify(m: Merchant): Promise<void> {
  const db = await stack.db();
  await db
    .prepare("UPDATE tenants SET certified_at = ?, mode = 'live', description_version = description_version + 1 WHERE id = ?")
    .bind(Date.now(), m.tenantId)
    .run();
}

describe("the mode switch", () => {
  test("from sandbox loans page 2, or with a sandbox chain filter, switching to Live shows the first page of live loans, unfiltered (it kept the sandbox cursor and filter and said there were none)", async () => {
    const m = await signUpMerchant(stack, "Audit Modes");
    for (let i = 0; i < 21; i++) expect((await sandboxLoan(m)).status).toBe(201);
    await certify(m);
    const liveKey = await m.dashboard("/v1/api-keys", { json: { name: "live backend", mode: "live" } });
    expect(liveKey.status).toBe(201);
    const live = await stack.fetch("/v1/loans", {
      headers: { "x-api-key": liveKey.body.key },
      json: {
        loanProductId: m.loanProductId,
        borrowerRef: "live-shopper",
        borrowerWalletAddress: newWallet(),
        chain: "POLYGON",
        principalAmount: "40.00",
        idempotencyKey: crypto.randomUUID(),
      },
    });
    expect(live.status).toBe(201);
    const liveId = live.body.id as string;

    const page = await signedIn(m.email);
    const modeSwitch = page.getByRole("group", { name: "Mode" });
    await rendered(page, () => modeSwitch.getByLabel("Sandbox").check());
    await goTo(page, "Loans");
    await rendered(page, () => page.getByRole("link", { name: "Next page" }).click());
    expect(page.url()).toContain("cursor=");
    // The merchant now looks at live loans, from sandbox page 2.
    await rendered(page, () => modeSwitch.getByLabel("Live").check());
    const fromPage2 = {
      liveLoanListed: await page.getByRole("link", { name: `Loan ${liveId}` }).count(),
      shown: (await page.locator("section.page").textContent())!.includes("No live loans yet") ? "No live loans yet" : "a list",
    };

    // Same with a sandbox chain filter: the Chain select of the live page has no such option and reads "Any".
    await visit(page, "/loans", "Loans");
    await rendered(page, () => modeSwitch.getByLabel("Sandbox").check());
    await page.getByLabel("Chain").selectOption("POLYGON_AMOY");
    await rendered(page, () => page.getByRole("button", { name: "Apply filters" }).click());
    await rendered(page, () => modeSwitch.getByLabel("Live").check());
    const withChain = {
      liveLoanListed: await page.getByRole("link", { name: `Loan ${liveId}` }).count(),
      chainSelectShows: await page
        .getByLabel("Chain")
        .evaluate((s) => (s as unknown as { selectedOptions: { textContent: string }[] }).selectedOptions[0]?.textContent),
      url: new URL(page.url()).search,
    };
    // Expected: the live list (first page, no sandbox-only chain) lists the live loan.
    expect({ fromPage2, withChain }).toEqual({
      fromPage2: { liveLoanListed: 1, shown: "a list" },
      withChain: { liveLoanListed: 1, chainSelectShows: "Any", url: "" },
    });
  }, 120_000);
});

describe("widget programs changed in the dashboard", () => {
  test("a loan of a program created in the session gets its repayment link; a loan of a program deleted in the session gets the details to copy, not a dead link (the session's /v1/me was never read again)", async () => {
    const m = await signUpMerchant(stack, "Audit Programs");
    // A loan drawn through signup's program, before the session starts.
    const first = await widgetCalls((path, json) => stack.fetch(`/v1/embed/${m.embedKey}${path}`, { json })).draw(evmBorrower(), {
      amount: "30.00",
      tenureDays: 7,
    });
    expect(first.status).toBe(201);
    const page = await signedIn(m.email);

    // A new program created in the page, and a loan drawn through it.
    await goTo(page, "Widget programs");
    const create = page.getByRole("form", { name: "New widget program" });
    await create.getByLabel("Name", { exact: true }).fill("Second shop");
    await rendered(page, () => create.getByRole("button", { name: "Create program" }).click());
    const programs = (await m.dashboard("/v1/widget-programs?limit=100")).body.data as { name: string; embedKey: string }[];
    const second = programs.find((p) => p.name === "Second shop")!;
    const drawn = await widgetCalls((path, json) => stack.fetch(`/v1/embed/${second.embedKey}${path}`, { json })).draw(evmBorrower(), {
      amount: "30.00",
      tenureDays: 7,
    });
    expect(drawn.status).toBe(201);
    await visit(page, `/loans/${drawn.body.loan.id}`, "Loan");
    const repay = page.locator('section[aria-labelledby="repay-title"]');
    await repay.waitFor();
    const newProgramLoan = (await repay.textContent())!.includes("is deleted") ? "says the program is deleted" : "repayment link";

    // The signup program deleted in the page: its embed key is 404 from now on.
    await goTo(page, "Widget programs");
    const signupProgram = programs.find((p) => p.embedKey === m.embedKey)!;
    await page.getByRole("button", { name: `Delete ${signupProgram.name}`, exact: true }).click();
    await rendered(page, () => page.getByRole("button", { name: `Confirm: delete "${signupProgram.name}" (its embed key stops working)` }).click());
    const stillThere = (await m.dashboard("/v1/widget-programs?limit=100")).body.data as { embedKey: string }[];
    const deletedFirst = !stillThere.some((p) => p.embedKey === m.embedKey);
    await visit(page, `/loans/${first.body.loan.id}`, "Loan");
    await repay.waitFor();
    const link = await page.getByTestId("repay-link").count();
    const deletedProgramLoan = link ? `repayment link ${await page.getByTestId("repay-link").textContent()}` : "details to copy";
    // The deleted program's embed key no longer reaches the loan: the link shown leads to a dead page.
    const embedAnswer = (await stack.fetch(`/v1/embed/${m.embedKey}/loans/${first.body.loan.id}`)).status;
    expect(embedAnswer).toBe(404);
    expect({ newProgramLoan, deletedFirst, deletedProgramLoan }).toEqual({
      newProgramLoan: "repayment link",
      deletedFirst: true,
      deletedProgramLoan: "details to copy",
    });
  }, 120_000);
});

describe("refused actions", () => {
  test("Redeliver on a delivery whose endpoint was deleted shows the API's 409 message beside the button, and no page error", async () => {
    const m = await signUpMerchant(stack, "Audit Redeliver");
    const receiver = servePage(() => new Response(null, { status: 204 }));
    const hook = await m.dashboard("/v1/webhooks", { json: { url: `${receiver.origin}/hooks`, events: ["*"], mode: "sandbox" } });
    expect(hook.status).toBe(201);
    expect((await m.dashboard(`/v1/webhooks/${hook.body.id}/test`, { method: "POST", json: {} })).status).toBeLessThan(300);
    for (let i = 0; i < 40; i++) {
      const d = await m.dashboard("/v1/webhooks/deliveries?mode=sandbox");
      if (d.body.data.some((x: { status: string }) => x.status !== "PENDING")) break;
      await Bun.sleep(250);
    }
    expect((await m.dashboard(`/v1/webhooks/${hook.body.id}`, { method: "DELETE" })).status).toBeLessThan(300);
    const page = await signedIn(m.email);
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await goTo(page, "Developers");
    const deliveries = page.getByRole("table", { name: "Webhook deliveries (sandbox)" });
    await deliveries.getByRole("button", { name: /^Redeliver webhook.test/ }).click();
    await page.getByText(/endpoint was deleted/).waitFor({ timeout: 10_000 });
    const api = await m.dashboard(`/v1/webhooks/deliveries/${(await m.dashboard("/v1/webhooks/deliveries?mode=sandbox")).body.data[0].id}/redeliver`, {
      method: "POST",
      json: {},
    });
    expect(api.status).toBe(409); // what the button got
    const shown = await page.getByText(/endpoint was deleted/).count();
    receiver.close();
    expect({ shown, uncaught: errors }).toEqual({ shown: 1, uncaught: [] });
  }, 120_000);
});

describe("one's own role", () => {
  test("an ADMIN who makes itself MEMBER on Team sees (MEMBER) and no write action at once", async () => {
    const m = await signUpMerchant(stack, "Audit Roles");
    const adminEmail = `admin.${Date.now()}@merchant.example`;
    expect((await m.dashboard("/v1/users", { json: { email: adminEmail, password: PASSWORD, role: "ADMIN" } })).status).toBe(201);
    const page = await signedIn(adminEmail);
    await goTo(page, "Team");
    await page.getByLabel(`Role of ${adminEmail}`).selectOption("MEMBER");
    const row = page.getByRole("row").filter({ hasText: adminEmail });
    await rendered(page, () => row.getByRole("button", { name: "Change role" }).click());
    const me = (await stack.fetch("/v1/auth/login", { json: { email: adminEmail, password: PASSWORD } })).body.user;
    expect(me.role).toBe("MEMBER"); // the API took it
    const header = (await page.locator("header .who").textContent())!.trim();
    const addUserForm = await page.getByRole("form", { name: "Add a user" }).count();
    expect({ header, addUserForm }).toEqual({ header: `· ${adminEmail} (MEMBER)`, addUserForm: 0 });
  }, 120_000);
});

describe("statuses", () => {
  test("Borrowers' recent borrowers show a loan's status as the loan list does: IN REVIEW, ACTIVE (overdue)", async () => {
    const m = await signUpMerchant(stack, "Audit Statuses");
    await reviewAbove50(m);
    const late = await sandboxLoan(m, { borrowerRef: "late-one", tenureDays: 3 });
    expect((await m.api("/v1/sandbox/clock/advance", { json: { seconds: 4 * 86_400 } })).status).toBe(200); // due + 1 day, grace 3
    const review = await sandboxLoan(m, { borrowerRef: "in-review", principalAmount: "75.00" });
    expect([late.status, review.body.decision.outcome]).toEqual([201, "MANUAL_REVIEW"]);
    const page = await signedIn(m.email);
    await goTo(page, "Loans");
    const statusIn = async (ref: string) => {
      const headers = await page.locator("table thead th").allTextContents();
      return page.getByRole("row").filter({ hasText: ref }).locator("td").nth(headers.indexOf("Status")).textContent();
    };
    const onLoans = { late: await statusIn("late-one"), review: await statusIn("in-review") };
    await goTo(page, "Borrowers");
    const onBorrowers = { late: await statusIn("late-one"), review: await statusIn("in-review") };
    expect(onLoans).toEqual({ late: "ACTIVE (overdue)", review: "IN REVIEW" });
    expect(onBorrowers).toEqual(onLoans);
  }, 120_000);

  test("an approved loan waiting for liquidity says so in the loan list (it read plain CREATED, like an undecided one)", async () => {
    const m = await signUpMerchant(stack, "Audit Funding");
    expect((await m.api("/v1/sandbox/liquidity", { method: "PUT", json: { available: "0" } })).status).toBe(200);
    const waiting = await sandboxLoan(m, { borrowerRef: "waits-for-money" });
    expect([waiting.body.status, waiting.body.decision.outcome, waiting.body.fundingState]).toEqual(["CREATED", "APPROVED", "AWAITING_LIQUIDITY"]);
    const page = await signedIn(m.email);
    await goTo(page, "Loans");
    const headers = await page.locator("table thead th").allTextContents();
    const cell = (await page.getByRole("row").filter({ hasText: "waits-for-money" }).locator("td").nth(headers.indexOf("Status")).textContent())!;
    expect(cell).toMatch(/AWAITING_LIQUIDITY|waiting for liquidity/i);
  }, 120_000);
});

describe("dates", () => {
  test("Home's day starts at 00:00 UTC and says so, in a browser at UTC-5 too (it showed 7:00 PM labelled UTC midnight)", async () => {
    const m = await signUpMerchant(stack, "Audit Dates");
    const page = await signedIn(m.email, 1280, "America/New_York");
    const hint = (await page.getByText(/^Since .*00:00 UTC/).textContent())!;
    const stats = (await m.dashboard("/v1/stats/today?mode=sandbox")).body as { from: string };
    expect(stats.from).toMatch(/T00:00:00\.000Z$/);
    // Expected: the time shown is the midnight it names (00:00 / 12:00 AM), or it names the zone it is in.
    expect(hint).toMatch(/12:00\s?AM|00:00/);
  }, 120_000);
});

describe("360 px", () => {
  test("at 360 px a loan table scrolls in its own box and the page fits the screen: header, mode switch and Log out stay on it", async () => {
    const m = await signUpMerchant(stack, "Audit Narrow");
    await reviewAbove50(m);
    expect((await sandboxLoan(m, { principalAmount: "75.00" })).body.decision.outcome).toBe("MANUAL_REVIEW");
    const page = await signedIn(m.email, 360);
    const measure = async (nav: string) => {
      await goTo(page, nav);
      return {
        pageOverflowPx: await page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth"),
        logOutRightEdge: Math.round((await page.getByRole("button", { name: "Log out" }).boundingBox())!.x + 80) <= 360,
      };
    };
    const loans = await measure("Loans");
    const review = await measure("Review queue");
    // Expected: only the table scrolls (.table-wrap has overflow-x: auto); the page itself fits 360 px.
    expect({ loans, review }).toEqual({
      loans: { pageOverflowPx: 0, logOutRightEdge: true },
      review: { pageOverflowPx: 0, logOutRightEdge: true },
    });
  }, 120_000);
});
