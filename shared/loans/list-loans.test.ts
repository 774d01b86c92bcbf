import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { LoanRow } from "../../db/schema/loans.ts";
import { loans } from "../../db/schema/loans.ts";
import type { DECISION_OUTCOMES } from "../domain/vocabularies.ts";
import { apiKey, createdLoan, sandboxTenant } from "../testing/loan-fixtures.ts";
import { createTestApp, type TestApp } from "../testing/harness.ts";
import { expectListsMatchDefinition } from "../testing/list-definition.ts";
import { pageThrough } from "../testing/page-through.ts";
import { LOAN_LIST_STATUSES, type LoanFilters, listLoans } from "./list-loans.ts";

/**
 * `listLoans` against its definition (DECISIONS.md's filters, SPEC.md's
 * derived DECLINED), whatever index each filter's query is written for
 * (history-plans.test.ts): on loans of every state the state machine allows
 * (CREATED undecided, approved, in review or declined; ACTIVE, REPAID and
 * DEFAULTED approved), of both modes, several borrowers, wallets and chains,
 * with ties on `createdAt`, beside another tenant's loans of the same
 * states, every filter combination is paged through to the end and must
 * give exactly the tenant's matching loans, newest first.
 */
let t: TestApp;
let tenantId: string;
let all: LoanRow[];

type Decision = (typeof DECISION_OUTCOMES)[number];
const STATES: { status: LoanRow["status"]; decision: Decision | null }[] = [
  { status: "CREATED", decision: null },
  { status: "CREATED", decision: "APPROVED" },
  { status: "CREATED", decision: "MANUAL_REVIEW" },
  { status: "CREATED", decision: "DECLINED" },
  { status: "ACTIVE", decision: "APPROVED" },
  { status: "REPAID", decision: "APPROVED" },
  { status: "DEFAULTED", decision: "APPROVED" },
];
const REFS = ["ref-a", "ref-b", "ref-c"];
const WALLETS = ["0x1111111111111111111111111111111111111111", "0x2222222222222222222222222222222222222222"];

beforeAll(async () => {
  t = await createTestApp();
  const m = await sandboxTenant(t);
  const template = await createdLoan(t, m.key, { borrowerRef: "template" });
  tenantId = (await t.request("GET", "/v1/me", { headers: apiKey(m.key) })).body.tenant.id as string;
  const [row] = await t.db.select().from(loans);
  const base = row!;
  expect(base.id).toBe(template.id);
  const rows: LoanRow[] = [];
  for (let i = 0; i < 140; i++) {
    const state = STATES[i % STATES.length]!;
    const live = i % 5 === 0;
    rows.push({
      ...base,
      id: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
      idempotencyKey: `list-${i}`,
      writeToken: `w-${i}`,
      status: state.status,
      decisionOutcome: state.decision,
      mode: live ? "live" : "sandbox",
      chain: live ? "POLYGON" : i % 2 ? "POLYGON_AMOY" : "BASE_SEPOLIA",
      borrowerRef: REFS[i % REFS.length]!,
      borrowerWalletAddress: WALLETS[i % WALLETS.length]!,
      // Pairs share a timestamp: the id breaks the tie.
      createdAt: new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 2) * 60_000),
    });
  }
  for (let i = 0; i < rows.length; i += 20) await t.db.insert(loans).values(rows.slice(i, i + 20));
  all = [base, ...rows];
  // Another tenant's loans of every state, refs and wallets alike: never listed.
  const other = await sandboxTenant(t);
  const otherId = (await t.request("GET", "/v1/me", { headers: apiKey(other.key) })).body.tenant.id as string;
  await t.db.insert(loans).values(rows.slice(0, 14).map((r, i) => ({ ...r, id: `00000000-0000-4000-9000-${String(i).padStart(12, "0")}`, tenantId: otherId })));
});
afterAll(() => t.close());

/** The definition: DECLINED is CREATED and declined; CREATED leaves declined loans out. */
function matches(l: LoanRow, f: LoanFilters): boolean {
  if (f.mode && l.mode !== f.mode) return false;
  if (f.status === "DECLINED" && !(l.status === "CREATED" && l.decisionOutcome === "DECLINED")) return false;
  if (f.status === "CREATED" && !(l.status === "CREATED" && l.decisionOutcome !== "DECLINED")) return false;
  if (f.status && f.status !== "DECLINED" && f.status !== "CREATED" && l.status !== f.status) return false;
  if (f.decision && l.decisionOutcome !== f.decision) return false;
  if (f.borrowerRef && l.borrowerRef !== f.borrowerRef) return false;
  if (f.borrowerWalletAddress && l.borrowerWalletAddress !== f.borrowerWalletAddress) return false;
  if (f.chain && l.chain !== f.chain) return false;
  return true;
}

/** Every page of the list, followed to the end. */
async function listed(filters: LoanFilters): Promise<string[]> {
  return (await pageThrough((cursor) => listLoans({ db: t.db }, { tenantId, filters, limit: 7, cursor }))).map((l) => l.id);
}

const combos: LoanFilters[] = [];
for (const mode of [undefined, "sandbox", "live"] as const) {
  for (const status of [undefined, ...LOAN_LIST_STATUSES]) {
    for (const decision of [undefined, "APPROVED", "MANUAL_REVIEW", "DECLINED"] as const) {
      combos.push({ mode, status, decision });
      combos.push({ mode, status, decision, borrowerRef: "ref-b" });
    }
    combos.push({ mode, status, borrowerWalletAddress: WALLETS[1] });
    combos.push({ mode, status, chain: "POLYGON_AMOY" });
  }
}

describe("GET /v1/loans filters, against their definition", () => {
  test(`${combos.length} filter combinations, each paged to the end, give exactly their loans, newest first`, async () => {
    await expectListsMatchDefinition({ combos, rows: all, matches, listed });
  });
});
