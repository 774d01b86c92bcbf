import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { borrowers } from "../../db/schema/borrowers.ts";
import { kybSubmissions } from "../../db/schema/go-live.ts";
import { PLAIN_TEXT_RULE } from "../../shared/domain/plain-text.ts";
import { createTestApp, type TestApp } from "../../shared/testing/harness.ts";
import { bearer, createKey, createSandboxLoan, signUpTenant, uniqueEmail, PASSWORD } from "../../shared/testing/fixtures.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** Text that reads as something else: a new line (and a Unicode line separator), a NUL, an escape, a right-to-left override, an isolate, a bidi mark, invisible characters. */
const BAD = [
  "ops\nTotal due: 1.00",
  "ops\u2028Total due: 1.00",
  "ops\u0000",
  "ops\u001b[31m",
  "user-\u202Egnp.exe",
  "a\u2067b",
  "INV-\u200F123",
  "INV-\u200B123",
  // Found by an audit: a combining grapheme joiner, a variation selector, a tag character, a blank Braille pattern.
  "INV-\u034F123",
  "INV-\uFE0F123",
  "INV-\u{E0041}123",
  `Acme Pay${"\u2800".repeat(40)} Amount: 1.00 USDC`,
];

const refused = (res: { status: number; body: any }, field: string) => {
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ statusCode: 400, error: "Bad Request" });
  expect(res.body.message).toContain(`${field}: ${PLAIN_TEXT_RULE}`);
};

test("every name, reference and KYC field people read refuses control characters and bidirectional overrides: 400 naming it, nothing written", async () => {
  const owner = await signUpTenant(t);
  const { key } = await createKey(t, owner.token);
  const api = { "x-api-key": key };
  const loan = await createSandboxLoan(t, key);
  const me = (await t.request("GET", "/v1/me", { headers: api })).body;
  const program = me.widgetPrograms[0];
  for (const bad of BAD) {
    refused(await t.request("POST", "/v1/auth/signup", { body: { email: uniqueEmail(), password: PASSWORD, companyName: bad } }), "companyName");
    refused(await t.request("POST", "/v1/api-keys", { body: { name: bad }, headers: bearer(owner.token) }), "name");
    refused(
      await t.request("PUT", `/v1/widget-programs/${program.id}`, {
        body: { name: bad, merchantConfigId: program.merchantConfigId, allowedOrigins: ["https://shop.example"] },
        headers: bearer(owner.token),
      }),
      "name",
    );
    refused(
      await t.request("PATCH", `/v1/borrowers/${encodeURIComponent(bad)}/kyc`, { body: { status: "VERIFIED", merchantUserId: "ops-1" }, headers: api }),
      "id",
    );
    refused(await t.request("PATCH", "/v1/borrowers/customer-1/kyc", { body: { status: "VERIFIED", merchantUserId: bad }, headers: api }), "merchantUserId");
    refused(
      await t.request("POST", `/v1/loans/${loan.id}/kyc-confirmation`, { body: { verified: true, merchantUserId: bad }, headers: api }),
      "merchantUserId",
    );
    refused(await t.request("POST", `/v1/loans/${loan.id}/kyc-confirmation`, { body: { verified: true, reference: bad }, headers: api }), "reference");
    // KYB, which the operator reads to decide: a file name must not read as another ("invoice\u202Efdp.exe").
    const kyb = {
      legalName: "Acme Pay Ltd",
      registrationNumber: "HRB 1",
      country: "de",
      documents: [{ kind: "certificate", fileName: "a.pdf", sha256: "c".repeat(64) }],
    };
    const submit = (body: unknown) => t.request("POST", "/v1/go-live/kyb", { body, headers: bearer(owner.token) });
    refused(await submit({ ...kyb, legalName: bad }), "legalName");
    refused(await submit({ ...kyb, registrationNumber: bad }), "registrationNumber");
    refused(await submit({ ...kyb, documents: [{ ...kyb.documents[0], fileName: bad }] }), "documents.0.fileName");
    refused(await submit({ ...kyb, documents: [{ ...kyb.documents[0], kind: bad }] }), "documents.0.kind");
  }
  expect(await t.db.select().from(kybSubmissions).where(eq(kybSubmissions.tenantId, owner.tenantId))).toEqual([]);
  // Nothing was written: no borrower of a refused ref or of the refused KYC updates, and the program keeps its name.
  expect(await t.db.select().from(borrowers).where(eq(borrowers.borrowerRef, "customer-1"))).toEqual([]);
  for (const bad of BAD) expect(await t.db.select().from(borrowers).where(eq(borrowers.borrowerRef, bad))).toEqual([]);
  expect((await t.request("GET", `/v1/widget-programs/${program.id}`, { headers: bearer(owner.token) })).body.name).toBe(program.name);
  // Plain text in other scripts, with accents and punctuation, is welcome.
  const fine = await t.request("PATCH", `/v1/borrowers/${encodeURIComponent("Café-株式会社 #7")}/kyc`, {
    body: { status: "VERIFIED", merchantUserId: "O'Brien (ops)" },
    headers: api,
  });
  expect(fine.status).toBe(200);
  expect(fine.body).toMatchObject({ borrowerRef: "Café-株式会社 #7", kyc: { status: "VERIFIED", merchantUserId: "O'Brien (ops)" } });
});
