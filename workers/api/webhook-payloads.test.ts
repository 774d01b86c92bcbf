import { afterAll, beforeAll, expect, test } from "bun:test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { EVENT_TYPES } from "../../shared/domain/vocabularies.ts";
import { createTestApp, type TestApp } from "../../shared/testing/harness.ts";
import { apiKey, createdLoan, createLoan, sandboxTenant } from "../../shared/testing/loan-fixtures.ts";
import { pageThrough } from "../../shared/testing/page-through.ts";
import { repayInSandbox } from "../../shared/testing/sandbox-repayment.ts";
import { WEBHOOK_DATA, webhookEnvelopeSchema } from "./webhook-payloads.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

test("the api document has a webhook per event type, with its envelope and signature headers, and no security scheme", async () => {
  const doc = (await t.request("GET", "/v1/openapi.json")).body;
  expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_TYPES].sort());
  const funded = doc.webhooks["loan.funded"].post;
  expect(funded).toMatchObject({ operationId: "webhooks.loan.funded", security: [] });
  expect(funded.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual(
    expect.arrayContaining(["header:x-svc-signature", "header:webhook-id", "header:webhook-timestamp", "header:webhook-signature"]),
  );
  expect(funded.requestBody.content["application/json"].schema.$ref).toBe("#/components/schemas/Event_loan_funded");
});

test("the events a sandbox tenant's loans raise match their documented webhook payloads, with no undocumented data field", async () => {
  const m = await sandboxTenant(t);
  // Funded and repaid; another overdue, then defaulted; a third waiting for liquidity (funding_failed, liquidity.*).
  const borrower = privateKeyToAccount(generatePrivateKey());
  const repaid = await createdLoan(t, m.key, { borrowerWalletAddress: borrower.address });
  await repayInSandbox(t, m.key, borrower, repaid.id);
  await createdLoan(t, m.key, { tenureDays: 3 });
  expect((await t.request("POST", "/v1/sandbox/clock/advance", { body: { seconds: 20 * 86_400 }, headers: apiKey(m.key) })).status).toBe(200);
  expect((await t.request("PUT", "/v1/sandbox/liquidity", { body: { available: "0.00" }, headers: apiKey(m.key) })).status).toBe(200);
  expect((await createLoan(t, m.key)).status).toBe(201);
  expect((await t.request("PUT", "/v1/sandbox/liquidity", { body: { available: "1000.00" }, headers: apiKey(m.key) })).status).toBe(200);

  const events = await pageThrough(
    async (cursor) => (await t.request("GET", `/v1/events?limit=100${cursor ? `&cursor=${cursor}` : ""}`, { headers: apiKey(m.key) })).body,
  );
  const seen = new Set<string>();
  for (const event of events as { type: (typeof EVENT_TYPES)[number]; data: Record<string, unknown> }[]) {
    seen.add(event.type);
    const parsed = webhookEnvelopeSchema(event.type).safeParse(event);
    expect({ type: event.type, issues: parsed.success ? [] : parsed.error.issues }).toEqual({ type: event.type, issues: [] });
    const documented = Object.keys(WEBHOOK_DATA[event.type].shape);
    expect({ type: event.type, undocumented: Object.keys(event.data).filter((k) => !documented.includes(k)) }).toEqual({ type: event.type, undocumented: [] });
  }
  expect([...seen].sort()).toEqual(
    expect.arrayContaining([
      "loan.application_submitted",
      "loan.decision",
      "loan.funded",
      "loan.repaid",
      "loan.overdue",
      "loan.defaulted",
      "loan.funding_failed",
      "liquidity.unavailable",
      "liquidity.low",
    ]),
  );
});
