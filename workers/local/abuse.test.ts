import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { newWallet } from "../../shared/testing/loan-fixtures.ts";
import { signUpMerchant, startTestStack, verificationToken, type TestStack } from "./integration.ts";

/**
 * Abuse limits through the real bundled workers: the embed worker's body cap
 * on both of its hosts, and the e-mail verification flow through the real
 * mail path (the development mailbox, written by the workers themselves).
 */
describe("abuse limits on workerd", () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startTestStack({ ratelimits: { IP_LIMITER: { limit: 1000 } } });
  }, 60_000);
  afterAll(() => stack?.dispose());

  test("a body a little over the cap is answered 413, not a reset connection, every time (an audit saw 10–30% ECONNRESET at 70 KiB)", async () => {
    const m = await signUpMerchant(stack, "Over Cap");
    const body = JSON.stringify({ padding: "x".repeat(70 * 1024) });
    const outcomes: string[] = [];
    for (let i = 0; i < 40; i++) {
      try {
        const res = await fetch(`${stack.baseUrl}/v1/loans`, { method: "POST", body, headers: { "content-type": "application/json", "x-api-key": m.apiKey } });
        outcomes.push(String(res.status));
        await res.text();
      } catch (err) {
        outcomes.push((err as { code?: string }).code ?? String(err));
      }
    }
    expect(outcomes).toEqual(Array(40).fill("413"));
  });

  test("a 2 MB body to the embed API is 413 before it is parsed, through the api host's /v1/embed/* route and on the embed port", async () => {
    const m = await signUpMerchant(stack, "Big Body");
    const body = JSON.stringify({ walletAddress: newWallet(), amount: "100.00", tenureDays: 7, padding: "x".repeat(2 * 1024 * 1024) });
    for (const base of [stack.baseUrl, stack.embedUrl]) {
      const res = await stack.fetch(`${base}/v1/embed/${m.embedKey}/quote`, { method: "POST", body, headers: { "content-type": "application/json" } });
      expect(res.status).toBe(413);
      expect(res.headers.get("x-svc-worker")).toBe("embed");
      expect(res.body).toEqual({ statusCode: 413, message: "Request body exceeds 65536 bytes", error: "Payload Too Large" });
    }
    // The same call with a normal body is a quote.
    const ok = await stack.fetch(`/v1/embed/${m.embedKey}/quote`, { json: { walletAddress: newWallet(), amount: "100.00", tenureDays: 7 } });
    expect(ok.status).toBe(200);
  });

  test("e-mail verification end to end: no notification e-mail before the link is followed, e-mail after", async () => {
    const m = await signUpMerchant(stack, "Verify Co", { verifyEmail: false });

    // Signup left exactly one e-mail: the link, with none of the merchant's text.
    const inbox = await m.dashboard("/v1/dev/mailbox?limit=100");
    expect(inbox.status).toBe(200);
    expect(inbox.body.data).toHaveLength(1);
    const [mail] = inbox.body.data;
    expect(mail).toMatchObject({ to: m.email, subject: "[svc credit] Verify your e-mail address", notificationId: null });
    expect(mail.body).not.toContain("Verify Co");
    expect(mail.body).toContain(`${stack.baseUrl}/v1/auth/verify-email?token=`);
    expect((await m.api("/v1/me")).body.emailVerified).toBe(false);

    // Before: the loan's notifications exist, their e-mail is skipped and nothing reaches the mailbox.
    const loan = async () => {
      const res = await m.api("/v1/loans", {
        json: {
          loanProductId: m.loanProductId,
          borrowerRef: `b-${crypto.randomUUID()}`,
          borrowerWalletAddress: newWallet(),
          chain: "POLYGON_AMOY",
          principalAmount: "50.00",
          idempotencyKey: crypto.randomUUID(),
        },
      });
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    const notificationsOf = async (loanId: string) =>
      ((await m.api("/v1/notifications?limit=100")).body.data as { id: string; body: string; email: { status: string; error: string | null } }[]).filter((n) =>
        n.body.includes(loanId),
      );
    const before = await loan();
    await stack.scheduled(); // the cron relay too: nothing more is sent
    const skipped = await until(async () => {
      const found = await notificationsOf(before);
      return found.length === 3 && found;
    });
    for (const n of skipped) expect(n.email).toMatchObject({ status: "SKIPPED", error: "owner e-mail not verified" });

    // The link opens a page; its button posts the form; the address is verified.
    const token = await verificationToken(stack, m.token);
    const page = await fetch(`${stack.baseUrl}/v1/auth/verify-email?token=${token}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('action="/v1/auth/verify-email"');
    expect((await m.api("/v1/me")).body.emailVerified).toBe(false);
    const confirmed = await fetch(`${stack.baseUrl}/v1/auth/verify-email`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `token=${token}`,
    });
    expect(confirmed.status).toBe(200);
    expect(await confirmed.text()).toContain("E-mail address verified");
    expect((await m.api("/v1/me")).body.emailVerified).toBe(true);
    expect((await stack.fetch("/v1/auth/verify-email", { json: { token } })).status).toBe(400); // single use

    // After: the next loan's notifications are e-mailed through the webhooks worker.
    const after = await loan();
    const sent = await until(async () => {
      const found = await notificationsOf(after);
      return found.length === 3 && found.every((n) => n.email.status === "SENT") && found;
    });
    const mails = (await m.dashboard("/v1/dev/mailbox?limit=100")).body.data as { notificationId: string | null }[];
    for (const n of sent) expect(mails.filter((x) => x.notificationId === n.id)).toHaveLength(1);
    for (const n of skipped) expect(mails.filter((x) => x.notificationId === n.id)).toHaveLength(0);
    for (const n of await notificationsOf(before)) expect(n.email.status).toBe("SKIPPED");
  }, 60_000);

  /** Polls until `check` returns a value (the Queue consumer runs after the request). */
  async function until<T>(check: () => Promise<T | false>, timeoutMs = 20_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await check();
      if (value) return value;
      if (Date.now() > deadline) throw new Error("timed out waiting");
      await new Promise((r) => setTimeout(r, 100));
    }
  }
});
