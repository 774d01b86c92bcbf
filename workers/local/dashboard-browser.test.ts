import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { launchBrowser } from "./browser.ts";
import { expectAccessible, goTo, logInInBrowser, openDashboard, screenshot, signUpInBrowser, WIDTHS } from "./dashboard/dashboard-harness.ts";
import { startTestStack, type TestStack } from "./integration.ts";

/**
 * The merchant dashboard in Debian's Chromium against the real workers:
 * sign up and log in through its forms, the frame (navigation, mode, log
 * out), its security headers, and the session held in memory only.
 */
let stack: TestStack;
let browser: Browser;
beforeAll(async () => {
  [stack, browser] = await Promise.all([startTestStack(), launchBrowser()]);
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await stack?.dispose();
});

describe("dashboard: sign up, log in, log out", () => {
  test("a new merchant signs up in the browser, lands on Home in sandbox, logs out and back in; nothing is kept in storage", async () => {
    const page = await openDashboard(browser, stack);
    await page.getByRole("heading", { level: 1, name: "Log in to svc credit" }).waitFor();
    const { email, password } = await signUpInBrowser(page);
    await page.getByRole("heading", { level: 1, name: "Home" }).waitFor();
    expect(await page.locator(".mode-badge").textContent()).toBe("Sandbox");
    await screenshot(page, "home");
    expect(await page.evaluate("[localStorage.length, sessionStorage.length, document.cookie]")).toEqual([0, 0, ""]);

    await page.getByRole("button", { name: "Log out" }).click();
    await page.getByText("You are logged out.").waitFor();
    await logInInBrowser(page, email, password);
    await goTo(page, "Loans");
    expect(page.url()).toBe(`${stack.baseUrl}/dashboard/loans`);
  }, 60_000);

  test("the team page: an owner adds a member, makes it an admin, removes it, changes its own password; log out ends the session on the server", async () => {
    const page = await openDashboard(browser, stack);
    await page.getByRole("heading", { level: 1, name: "Log in to svc credit" }).waitFor();
    // The session token the page sends, to check what the server makes of it afterwards.
    let token = "";
    page.on("request", (r) => {
      const auth = r.headers().authorization;
      if (auth?.startsWith("Bearer ")) token = auth.slice(7);
    });
    const { email, password } = await signUpInBrowser(page);
    await goTo(page, "Team");
    const member = `member.${Date.now()}@dashboard.example`;
    const add = page.getByRole("form", { name: "Add a user" });
    await add.getByLabel("E-mail").fill(member);
    await add.getByLabel("Initial password").fill("a long member password");
    await page.getByRole("button", { name: "Add user" }).click();
    await page.getByText(`${member} was added.`).waitFor();

    const row = page.getByRole("row").filter({ hasText: member });
    await row.getByLabel(`Role of ${member}`).selectOption("ADMIN");
    await row.getByRole("button", { name: "Change role" }).click();
    await page.getByRole("row").filter({ hasText: member }).getByRole("cell", { name: "ADMIN", exact: true }).waitFor();
    await page.getByRole("button", { name: `Remove ${member}` }).click();
    await page.getByRole("button", { name: `Confirm: remove ${member}` }).click();
    await page.getByRole("row").filter({ hasText: member }).waitFor({ state: "detached" });
    const login = (pw: string) =>
      fetch(`${stack.baseUrl}/v1/auth/login`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: member, password: pw }),
      });
    expect((await login("a long member password")).status).toBe(401);

    // A new password: the page keeps working on the session the change answered; the old password no longer logs in.
    const NEW = "a brand new long passphrase";
    await page.getByLabel("Current password").fill(password);
    await page.getByLabel("New password").fill(NEW);
    // The session the page holds before the change.
    const old = token;
    await page.getByRole("button", { name: "Change password" }).click();
    await page.getByRole("heading", { level: 1, name: "Team" }).waitFor();
    await page.getByRole("heading", { level: 2, name: "Your password" }).waitFor();
    const me = (bearer: string) => fetch(`${stack.baseUrl}/v1/me`, { headers: { authorization: `Bearer ${bearer}` } });
    // The page's next requests carry the new session: the one it held before the change is refused.
    for (let i = 0; i < 50 && token === old; i++) await Bun.sleep(100);
    expect(token).not.toBe(old);
    expect((await me(old)).status).toBe(401);
    expect((await me(token)).status).toBe(200);

    const before = token;
    await page.getByRole("button", { name: "Log out" }).click();
    await page.getByText("You are logged out.").waitFor();
    expect((await me(before)).status).toBe(401);
    await logInInBrowser(page, email, NEW);
  }, 90_000);

  test("an address someone else signed up with: signup says so, the owner of the address asks for a link, follows it, and signs up", async () => {
    const email = `taken.${Date.now()}@dashboard.example`;
    const squat = await stack.fetch("/v1/auth/signup", { json: { email, password: "the squatter's password", companyName: "Squat" } });
    expect(squat.status).toBe(201);
    const page = await openDashboard(browser, stack);
    await page.getByRole("button", { name: "Create an account" }).click();
    await page.getByLabel("E-mail").fill(email);
    await page.getByLabel("Password").fill("correct horse battery staple");
    await page.getByLabel("Company name").fill("The Real Owner");
    await page.getByRole("button", { name: "Create account" }).click();
    await page.getByRole("alert").filter({ hasText: "An account with this e-mail already exists" }).first().waitFor();

    await page.getByRole("button", { name: "Free it" }).click();
    await page.getByRole("heading", { level: 1, name: "Free an e-mail address" }).waitFor();
    await page.getByLabel("E-mail", { exact: true }).fill(email);
    await page.getByRole("button", { name: "E-mail me a link" }).click();
    await page.getByText("a link to free it has been e-mailed").waitFor();

    const db = await stack.db();
    // The link is written and sent after the answer (waitUntil).
    let mail: { body: string } | null = null;
    for (let i = 0; i < 50 && !mail; i++) {
      mail = await db
        .prepare("SELECT body FROM mailbox WHERE to_address = ? AND subject = ? ORDER BY rowid DESC")
        .bind(email, "[svc credit] Free this e-mail address")
        .first<{ body: string }>();
      if (!mail) await Bun.sleep(100);
    }
    const link = /(http\S+\/v1\/auth\/release-email\?token=[0-9A-Za-z]+)/.exec(mail?.body ?? "")?.[1];
    expect(link).toBeDefined();
    await page.goto(link!.replace(/^https?:\/\/[^/]+/, stack.baseUrl));
    await page.getByRole("button", { name: "Free my e-mail address" }).click();
    await page.getByRole("heading", { level: 1, name: "E-mail address freed" }).waitFor();
    const squatterLogin = await stack.fetch("/v1/auth/login", { json: { email, password: "the squatter's password" } });
    expect(squatterLogin.status).toBe(401);

    // The squatter cannot take it back: for 24 hours only the link's holder signs up with it.
    const again = await stack.fetch("/v1/auth/signup", { json: { email, password: "the squatter's password", companyName: "Squat" } });
    expect(again.status).toBe(409);
    await page.getByRole("link", { name: "Sign up with this address" }).click();
    await page.getByRole("heading", { level: 1, name: "Create your svc credit account" }).waitFor();
    await page.getByText("Sign up with the address you just freed").waitFor();
    expect(new URL(page.url()).hash).toBe("");
    await page.getByLabel("E-mail").fill(email);
    await page.getByLabel("Password").fill("correct horse battery staple");
    await page.getByLabel("Company name").fill("The Real Owner");
    await page.getByRole("button", { name: "Create account" }).click();
    await page.getByRole("navigation", { name: "Dashboard" }).waitFor();
  }, 60_000);

  test("a wrong password shows the API's message on the form; the page has a nonce CSP and cannot be framed", async () => {
    const page = await openDashboard(browser, stack);
    const response = await page.goto(`${stack.baseUrl}/dashboard`);
    const csp = response!.headers()["content-security-policy"]!;
    expect(csp).toMatch(/script-src 'nonce-[A-Za-z0-9+/=]+' 'strict-dynamic'/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("connect-src 'self'");
    await page.getByLabel("E-mail").fill("nobody@dashboard.example");
    await page.getByLabel("Password").fill("not the password at all");
    await page.getByRole("button", { name: "Log in" }).click();
    await expect(
      page
        .getByRole("alert")
        .filter({ hasText: /Invalid|credentials/i })
        .first()
        .textContent(),
    ).resolves.toBeTruthy();
  }, 60_000);

  test("the session expires: when the token's hour is up the page says so and asks to log in again; an API 401 does the same", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.clock.install();
    await page.goto(`${stack.baseUrl}/dashboard`);
    await signUpInBrowser(page, "Expiring");
    await page.clock.fastForward("01:00:05");
    await page.getByText("Your session expired. Log in again to continue.").waitFor();
    expect(await page.getByRole("navigation", { name: "Dashboard" }).count()).toBe(0);

    // Revoked or rejected before its time: the next API answer is a 401, and the page says the same.
    const again = await openDashboard(browser, stack);
    await signUpInBrowser(again, "Rejected");
    await again.route("**/v1/**", (route) =>
      route.fulfill({
        status: 401,
        contentType: "application/json",
        body: JSON.stringify({ statusCode: 401, message: "Missing or invalid credentials", error: "Unauthorized" }),
      }),
    );
    await again.getByRole("button", { name: "Send the link again" }).click();
    await again.getByText("Your session expired. Log in again to continue.").waitFor();
  }, 60_000);

  test.each(WIDTHS)(
    "the log-in page and Home have no axe violations at %i px",
    async (width) => {
      const page = await openDashboard(browser, stack, width);
      await page.getByRole("heading", { level: 1, name: "Log in to svc credit" }).waitFor();
      await expectAccessible(page, `login@${width}`);
      await signUpInBrowser(page, `Axe ${width}`);
      await expectAccessible(page, `home@${width}`);
    },
    60_000,
  );
});
