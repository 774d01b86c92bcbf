import type { Browser, Page } from "playwright-core";
import { expect } from "bun:test";
import { axeViolations } from "../accessibility.ts";
import { artifactsDir } from "../browser.ts";
import type { TestStack } from "../integration.ts";

/**
 * The dashboard browser tests' helpers: a page at a width, signing up or
 * logging in through the dashboard's own forms, a screenshot per page as a
 * test artifact (test-artifacts/dashboard/), and axe-core at 360 and 1280 px.
 */
export const WIDTHS = [360, 1280] as const;

export async function openDashboard(browser: Browser, stack: TestStack, width: number = 1280): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${stack.baseUrl}/dashboard`);
  return page;
}

let signups = 0;

/** Signs a new merchant up through the dashboard's form; the owner's e-mail and password. */
export async function signUpInBrowser(page: Page, company = "Browser Merchant"): Promise<{ email: string; password: string }> {
  const email = `owner.${Date.now()}.${++signups}@dashboard.example`;
  const password = "correct horse battery staple";
  await page.getByRole("button", { name: "Create an account" }).click();
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByLabel("Company name").fill(`${company} ${signups}`);
  await page.getByRole("button", { name: "Create account" }).click();
  await page.getByRole("navigation", { name: "Dashboard" }).waitFor();
  return { email, password };
}

/** Logs in through the dashboard's form. */
export async function logInInBrowser(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Log in" }).click();
  await page.getByRole("navigation", { name: "Dashboard" }).waitFor();
}

/** Goes to a page through the navigation, as a merchant would, and waits for its heading. */
export async function goTo(page: Page, nav: string, heading = nav): Promise<void> {
  await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: nav, exact: true }).click();
  await page.getByRole("heading", { level: 1, name: heading }).waitFor();
}

/** A screenshot of the page as it is now, under test-artifacts/dashboard/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  const dir = await artifactsDir("dashboard");
  await page.screenshot({ path: `${dir}/${name}.png`, fullPage: true });
}

/** axe-core finds nothing on the page as it is now. */
export async function expectAccessible(page: Page, label: string): Promise<void> {
  const violations = await axeViolations(page.mainFrame());
  expect({ label, violations }).toEqual({ label, violations: [] });
}

/**
 * Runs `action` (a click, a history change) and waits until the app has rendered the next page: the page shown is
 * marked first, so that the wait is for a new one (two pages may share a heading, "Loan"; a list re-rendered with
 * other filters keeps its heading).
 */
export async function rendered(page: Page, action: () => Promise<unknown>, heading?: string): Promise<void> {
  await page.evaluate(`document.querySelector("section.page")?.setAttribute("data-left", "")`);
  await action();
  const next = page.locator("section.page:not([data-left])");
  await (heading ? next.getByRole("heading", { level: 1, name: heading }) : next).waitFor();
}

/** Goes to a dashboard path inside the app (a reload would end the in-memory session), as a link would. */
export async function visit(page: Page, path: string, heading: string): Promise<void> {
  // The app's own popstate handler renders the path (the test's tsconfig has no DOM types, hence the string).
  const go = `history.pushState(null, "", ${JSON.stringify(`/dashboard${path}`)}); dispatchEvent(new PopStateEvent("popstate"));`;
  await rendered(page, () => page.evaluate(go), heading);
}
