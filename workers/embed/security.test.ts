import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { createTestApp, type TestApp } from "../../shared/testing/harness.ts";
import { newWallet } from "../../shared/testing/loan-fixtures.ts";
import { canonicalValue, errorBodyProblem, operationsOf, type DocumentedOperation, type OpenApiDoc } from "../../shared/testing/openapi-values.ts";
import { seededTenant, type SeededTenant } from "../../shared/testing/seeded-tenant.ts";
import { ROUTES } from "./routes.ts";
import { createEmbedTestApp } from "./testing/harness.ts";

/**
 * The embed worker's security rules over its whole document (every route is
 * documented; the first test holds the document to the route table): an
 * unknown embed key → 404 on every route that takes one; another tenant's
 * real loan id → 404 on every route that takes a loan id. A path parameter
 * the suite does not know fails it, so a new kind of parameter is not
 * silently skipped.
 */

const UNKNOWN_KEY = "ek_test_AAAAAAAAAAAAAAAAAAAAAAAA";
/** Path parameters that name nothing of a tenant: asset file names (content-hashed, public). */
const PUBLIC_PARAMS = new Set(["name"]);
const TENANT_PARAMS = new Set(["embedKey", "loanId"]);

let t: TestApp;
let e: ReturnType<typeof createEmbedTestApp>;
let doc: OpenApiDoc;
let ops: DocumentedOperation[];
let caller: SeededTenant;
let victim: SeededTenant;
const exercised = new Map<string, Set<string>>();
const mark = (o: DocumentedOperation, check: string) => {
  const k = `${o.method} ${o.path}`;
  if (!exercised.has(k)) exercised.set(k, new Set());
  exercised.get(k)!.add(check);
};

beforeAll(async () => {
  t = await createTestApp();
  e = createEmbedTestApp(t);
  doc = (await e.request("GET", "/openapi.json")).body;
  ops = operationsOf(doc);
  caller = await seededTenant(t, "Embed caller");
  victim = await seededTenant(t, "Embed victim");
});
afterAll(() => t.close());

const paramNames = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);

function send(o: DocumentedOperation, values: Record<string, string>) {
  const path = o.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? "x"));
  const wallet = newWallet();
  const body = o.body ? canonicalValue(doc, o.body, { walletAddress: fc.constant(wallet) }) : undefined;
  return e.request(o.method, path, { body });
}

/** A 404 from the route itself (not the app's "no route"), with the spec's body on the JSON API. */
function expect404(o: DocumentedOperation, res: { status: number; body: any }, what: string): string[] {
  if (res.status !== 404) return [`${what}: expected 404, got ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`];
  if (typeof res.body === "object" && String(res.body?.message).startsWith("No route for")) return [`${what}: 404 from no route at all`];
  if (!o.path.startsWith("/v1/")) return []; // a page: the 404 is HTML
  const problem = errorBodyProblem(404, res.body);
  return problem ? [`${what}: ${problem}`] : [];
}

describe("every embed route", () => {
  test("the document lists every route of the table, and each path parameter is one the suite knows", () => {
    expect(ops.length).toBe(ROUTES.length);
    const unknown = ops.flatMap((o) =>
      paramNames(o.path)
        .filter((p) => !TENANT_PARAMS.has(p) && !PUBLIC_PARAMS.has(p))
        .map((p) => `${o.method} ${o.path}: {${p}}`),
    );
    expect(unknown, "path parameters without a security check: add them here and to seededTenant").toEqual([]);
  });

  test("an unknown embed key: 404 on every route that takes one", async () => {
    const failures: string[] = [];
    for (const o of ops) {
      if (!paramNames(o.path).includes("embedKey")) continue;
      failures.push(...expect404(o, await send(o, { embedKey: UNKNOWN_KEY, loanId: caller.loanId }), `${o.method} ${o.path} with an unknown key`));
      mark(o, "unknown key");
    }
    expect(failures).toEqual([]);
  });

  test("another tenant's loan id: 404 on every route that takes a loan id", async () => {
    const failures: string[] = [];
    for (const o of ops) {
      if (!paramNames(o.path).includes("loanId")) continue;
      const res = await send(o, { embedKey: caller.embedKey, loanId: victim.loanId });
      failures.push(...expect404(o, res, `${o.method} ${o.path} with the other tenant's loan`));
      mark(o, "other tenant's loan");
    }
    expect(failures).toEqual([]);
  });

  test("every route went through the checks that apply to it", () => {
    const missing: string[] = [];
    for (const o of ops) {
      const names = paramNames(o.path);
      const got = exercised.get(`${o.method} ${o.path}`) ?? new Set();
      if (names.includes("embedKey") && !got.has("unknown key")) missing.push(`${o.method} ${o.path}: unknown key`);
      if (names.includes("loanId") && !got.has("other tenant's loan")) missing.push(`${o.method} ${o.path}: other tenant's loan`);
    }
    expect(missing).toEqual([]);
    expect(exercised.size).toBeGreaterThan(0);
  });
});
