import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../../shared/testing/harness.ts";
import { bearer, createKey, signUpTenant } from "../../../shared/testing/fixtures.ts";
import { createEmbedTestApp } from "../testing/harness.ts";
import { evmBorrower, tonBorrower, widgetCalls, type TestBorrower } from "../../../shared/testing/widget-borrower.ts";
import { evmPaymentLinks } from "../../../shared/chains/evm/eip681.ts";

let t: TestApp;
let e: ReturnType<typeof createEmbedTestApp>;
beforeAll(async () => {
  t = await createTestApp();
  e = createEmbedTestApp(t);
});
afterAll(() => t.close());

/** A tenant whose program allows shop.example, with a loan drawn through the widget (the repay page serves only the program's loans). */
async function merchantWithLoan(network: "POLYGON" | "TON" = "POLYGON") {
  const owner = await signUpTenant(t);
  const { key } = await createKey(t, owner.token);
  await t.request("PUT", "/v1/settings", {
    body: {
      requiresKycBeforeFunding: false,
      branding: {
        companyName: `<script>alert("x")</script> & Co`,
        logoUrl: "https://cdn.example/logo.png",
        primaryColor: "#0A7E3D",
        supportEmail: null,
        termsUrl: null,
      },
    },
    headers: bearer(owner.token),
  });
  const me = (await t.request("GET", "/v1/me", { headers: { "x-api-key": key } })).body;
  let program = me.widgetPrograms[0];
  await t.request("PUT", `/v1/widget-programs/${program.id}`, {
    body: { name: program.name, merchantConfigId: program.merchantConfigId, allowedOrigins: ["https://shop.example"] },
    headers: bearer(owner.token),
  });
  let borrower = evmBorrower() as TestBorrower;
  let tenureDays = 7;
  if (network === "TON") {
    const config = await t.request("POST", "/v1/merchant-configs", {
      body: {
        network: "TON",
        stablecoin: "USDT",
        tenures: [3],
        minTicket: "10.00",
        maxTicket: "500.00",
        gracePeriodDays: 3,
        processingFee: { type: "FIXED", value: "1.00" },
        lateFee: { type: "FIXED", value: "0.50" },
      },
      headers: bearer(owner.token),
    });
    program = (
      await t.request("POST", "/v1/widget-programs", {
        body: { name: "TON", merchantConfigId: config.body.id, allowedOrigins: ["https://shop.example"] },
        headers: bearer(owner.token),
      })
    ).body;
    borrower = tonBorrower();
    tenureDays = 3;
  }
  const widget = widgetCalls((path, body) => e.request("POST", `/v1/embed/${program.embedKey}${path}`, { body }));
  const accepted = await widget.draw(borrower, { amount: "100.00", tenureDays });
  expect(accepted.status).toBe(201);
  const loan = (await t.request("GET", `/v1/loans/${accepted.body.loan.id}`, { headers: { "x-api-key": key } })).body;
  expect(loan.status).toBe("ACTIVE");
  return { key, embedKey: program.embedKey as string, loan };
}

test("EVM: amount due, due date, the wallet button with its instructions, branding escaped, framed only by the program", async () => {
  const m = await merchantWithLoan();
  const res = await e.request("GET", `/embed/${m.embedKey}/repay/${m.loan.id}`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/html");
  const html = String(res.body);
  // Standards mode (an audit found the page in quirks mode without a doctype).
  expect(html.startsWith('<!doctype html><html lang="en">')).toBe(true);
  expect(html).toContain(">102.00 USDC<");
  expect(html).toContain(`datetime="${m.loan.dueAt}"`);
  expect(html).toContain('id="pay-evm"');
  // The wallet that borrowed, shown, and the only account the button pays from.
  expect(html).toContain(`<code data-testid="borrower-wallet" style="word-break:break-all">${m.loan.borrowerWalletAddress}</code>`);
  expect(html).toContain(`var borrower="${m.loan.borrowerWalletAddress}";`);
  const instructions = JSON.parse(/<script type="application\/json" id="instructions">(.*?)<\/script>/s.exec(html)![1]!);
  expect(instructions).toMatchObject({
    chain: "POLYGON_AMOY",
    amount: "102.00",
    transactions: [{ description: expect.any(String) }, { description: expect.any(String) }],
  });
  expect(html).not.toContain('<script>alert("x")</script>');
  expect(html).toContain("&lt;script&gt;");
  expect(html).toContain("--brand:#0A7E3D");
  expect(html).toContain("Powered by svc credit");
  const csp = res.headers.get("content-security-policy")!;
  expect(csp).toContain("frame-ancestors https://shop.example");
  const nonce = /script-src 'nonce-([^']+)'/.exec(csp)![1]!;
  // Every executable script carries the nonce; the instructions block is data.
  const scripts = [...html.matchAll(/<script([^>]*)>/g)].map((m) => m[1]!);
  expect(scripts.filter((a) => !a.includes('type="application/json"')).every((a) => a.includes(`nonce="${nonce}"`))).toBe(true);
});

test("EVM by hand (SPEC rule 7: wallet link, QR code, manual fields): each step as an EIP-681 link with its QR code, and the transaction's to and data to copy, in order (an audit found only the button)", async () => {
  const m = await merchantWithLoan();
  const html = String((await e.request("GET", `/embed/${m.embedKey}/repay/${m.loan.id}`)).body);
  const i = JSON.parse(/<script type="application\/json" id="instructions">(.*?)<\/script>/s.exec(html)![1]!);
  const approve = `ethereum:${i.token.address}@80002/approve?address=${i.spender}&amp;uint256=102000000`;
  const repay = `ethereum:${i.spender}@80002/repay?bytes32=${i.loanIdBytes32}&amp;address=${i.collections}&amp;uint256=102000000`;
  expect(html).toContain(`id="pay-evm-step-1"`);
  expect(html.indexOf(`href="${approve}"`)).toBeGreaterThan(0);
  expect(html.indexOf(`href="${repay}"`)).toBeGreaterThan(html.indexOf(`href="${approve}"`));
  expect(html.match(/<svg/g)).toHaveLength(2);
  for (const [n, tx] of [i.transactions[0], i.transactions[1]].entries()) {
    expect(html).toContain(`id="f-step-${n + 1}-to" readonly="" value="${tx.to}"`);
    expect(html).toContain(`id="f-step-${n + 1}-data" readonly="" value="${tx.data}"`);
  }
  expect(evmPaymentLinks(i)).toEqual({ approve: approve.replaceAll("&amp;", "&"), repay: repay.replaceAll("&amp;", "&") });
});

test("TON: ton:// link, its QR code, manual fields with copy buttons and the exchange warning", async () => {
  const m = await merchantWithLoan("TON");
  const html = String((await e.request("GET", `/embed/${m.embedKey}/repay/${m.loan.id}`)).body);
  expect(html).toMatch(/href="ton:\/\/transfer\/0Q[^"]+jetton=kQ[^"]+amount=101000000&amp;text=svc%3Arepay%3A/);
  expect(html).toContain("<svg");
  expect(html).toContain(`value="svc:repay:${m.loan.id}"`);
  expect(html).toContain('value="101.000000"');
  expect(html).toContain('data-copy="f-comment"');
  expect(html).toContain("Transfers from an exchange lose the comment");
});

test("unknown key or loan: 404", async () => {
  const m = await merchantWithLoan();
  expect((await e.request("GET", `/embed/ek_test_AAAAAAAAAAAAAAAAAAAAAAAA/repay/${m.loan.id}`)).status).toBe(404);
  expect((await e.request("GET", `/embed/${m.embedKey}/repay/${crypto.randomUUID()}`)).status).toBe(404);
});

test("opened from the widget, the page posts only to an allowed parent origin", async () => {
  const m = await merchantWithLoan();
  const scriptOf = async (query: string) => String((await e.request("GET", `/embed/${m.embedKey}/repay/${m.loan.id}${query}`)).body);
  expect(await scriptOf(`?parent=${encodeURIComponent("https://shop.example")}`)).toContain('var parentOrigin="https://shop.example";');
  for (const parent of ["https://evil.example", "*", ""]) expect(await scriptOf(`?parent=${encodeURIComponent(parent)}`)).toContain("var parentOrigin=null;");
  expect(await scriptOf("")).toContain("var parentOrigin=null;");
});
