import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import fc from "fast-check";
import { tenants } from "../../db/schema/tenants.ts";
import { DEV_OPERATOR_KEY, OPERATOR_KEY_HEADER } from "../../shared/auth/operator-key.ts";
import { issueSessionToken } from "../../shared/auth/session-tokens.ts";
import { addUserWithRole, bearer, uniqueEmail } from "../../shared/testing/fixtures.ts";
import { createTestApp, type TestApp, type TestResponse } from "../../shared/testing/harness.ts";
import { apiKey, newWallet } from "../../shared/testing/loan-fixtures.ts";
import { canonicalValue, errorBodyProblem, operationsOf, type OpenApiDoc } from "../../shared/testing/openapi-values.ts";
import { PARAM_RESOURCES, paramKey, seededTenant, type SeededTenant } from "../../shared/testing/seeded-tenant.ts";
import type { RouteSpec } from "./route.ts";
import { ROUTES, type ApiRouteModule } from "./routes.ts";

/**
 * The security rules of every route, driven by the route table: each entry of
 * ROUTES carries its auth spec (`defineRoute`), so a new route is checked
 * here without writing a test. For every route: no credential, a bad key or
 * session → 401; a MEMBER on an Owner/Admin route → 403; a key on a
 * dashboard-only route → 401 (or 403 where keys are authenticated but not
 * allowed); another tenant's real id in each path parameter → 404; an API key
 * of the other mode on a mode-restricted route → 403. The last test fails when
 * a route escaped one of these checks.
 */

const ERROR_NAMES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  409: "Conflict",
  429: "Too Many Requests",
};

/**
 * Routes that create the resource a new identifier names (DECISIONS: a
 * borrower is created on first use by its ref). Another tenant's id is then
 * only a new ref of the caller's: the check is that the other tenant's
 * resource is neither returned nor changed.
 */
const CREATES_ON_FIRST_USE = new Set(["PATCH /v1/borrowers/{id}/kyc"]);

/**
 * Routes that read the caller's own sandbox ledger by a wallet address: another tenant's
 * borrower wallet is no resource of theirs to 404 on; the caller's ledger has never seen it
 * (balance 0), so nothing of the other tenant's ledger shows.
 */
const READS_OWN_LEDGER = new Set(["GET /v1/sandbox/chain/accounts/{address}"]);

/** Required query parameters of routes that have them. */
const QUERIES: Record<string, string> = { "GET /v1/sandbox/chain/accounts/{address}": "?chain=POLYGON_AMOY" };

/**
 * Path parameters naming something that records a mode (DECISIONS.md
 * "Modes"): an API key of the other mode finds it no more than another
 * tenant's (404).
 */
const MODE_SCOPED_PARAMS = new Set([
  "loans/{id}",
  "settlements/{loanId}",
  "events/{id}",
  "notifications/{id}",
  "webhooks/{id}",
  "deliveries/{id}",
  "credit-lines/{id}",
]);

const routeKey = (r: ApiRouteModule) => `${r.route.method.toUpperCase()} ${r.route.path}`;
const specOf = (r: ApiRouteModule): RouteSpec => r.route.spec;
const paramNames = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
const acceptsKey = (s: RouteSpec) => s.auth === "KEY" || s.auth === "KEY_OR_JWT";
const acceptsSession = (s: RouteSpec) => s.auth === "JWT" || s.auth === "KEY_OR_JWT";

let t: TestApp;
let doc: OpenApiDoc;
/** Whose credentials every check uses (its resources may be changed by the calls). */
let caller: SeededTenant;
/** Whose ids the caller tries. */
let victim: SeededTenant;
const exercised = new Map<string, Set<string>>();
const mark = (r: ApiRouteModule, check: string) => {
  const k = routeKey(r);
  if (!exercised.has(k)) exercised.set(k, new Set());
  exercised.get(k)!.add(check);
};

beforeAll(async () => {
  t = await createTestApp();
  doc = (await t.request("GET", "/v1/openapi.json")).body;
  caller = await seededTenant(t, "Caller");
  victim = await seededTenant(t, "Victim");
});
afterAll(() => t.close());

let unique = 0;
/** A valid body from the route's documented schema, naming the tenant's own resources. */
function bodyFor(r: ApiRouteModule, s: SeededTenant): unknown {
  const op = doc.paths[r.route.path]?.[r.route.method];
  const schema = op?.requestBody?.content?.["application/json"]?.schema;
  if (!schema) return undefined;
  const n = ++unique;
  const wallet = newWallet();
  return canonicalValue(doc, schema, {
    loanId: fc.constant(s.loanId),
    loanProductId: fc.constant(s.loanProductId),
    merchantConfigId: fc.constant(s.merchantConfigId),
    borrowerWalletAddress: fc.constant(wallet),
    walletAddress: fc.constant(wallet),
    address: fc.constant(wallet),
    from: fc.constant(wallet),
    to: fc.constant(newWallet()),
    email: fc.constant(uniqueEmail("security")),
    idempotencyKey: fc.constant(`security-${n}`),
    url: fc.constant("https://hooks.merchant.example/security"),
  });
}

/** Fills every path parameter with the tenant's own resource of that kind (the first, for borrowers: the id). */
function pathFor(r: ApiRouteModule, s: SeededTenant, override: Record<string, string> = {}): string {
  const path = r.route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = override[name] ?? PARAM_RESOURCES[paramKey(r.route.path, name)]?.(s)[0] ?? "00000000-0000-4000-8000-000000000000";
    return encodeURIComponent(value);
  });
  return `${path}${QUERIES[routeKey(r)] ?? ""}`;
}

/** The owner's credential the route accepts: its API key on key routes, its session otherwise; the operator's key on operator routes. */
const ownerCredential = (r: ApiRouteModule, s: SeededTenant) =>
  specOf(r).auth === "OPERATOR" ? { [OPERATOR_KEY_HEADER]: DEV_OPERATOR_KEY } : specOf(r).auth === "KEY" ? apiKey(s.key) : bearer(s.token);
const isOperator = (r: ApiRouteModule) => specOf(r).auth === "OPERATOR";

/**
 * Routes that end the calling user's sessions, on every device (log out, a password change): called
 * as a new user of the same role, so the users whose sessions the suite shares keep them.
 */
const ENDS_SESSIONS = new Set(["POST /v1/auth/logout", "POST /v1/auth/password"]);

async function call(r: ApiRouteModule, s: SeededTenant, headers: Record<string, string>, override: Record<string, string> = {}) {
  const token = headers.authorization?.replace(/^Bearer /, "");
  const role = token === s.token ? "OWNER" : token === s.member.token ? "MEMBER" : null;
  if (ENDS_SESSIONS.has(routeKey(r)) && role) headers = { ...headers, ...bearer((await addUserWithRole(t, s.token, role)).token) };
  return t.request(r.route.method.toUpperCase(), pathFor(r, s, override), { headers, body: bodyFor(r, s) });
}

/** "<route>: <what went wrong>" for a response that is not the expected error with the spec's body. */
function expectError(res: TestResponse, status: number, what: string): string[] {
  if (res.status !== status) return [`${what}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`];
  const problem =
    errorBodyProblem(status, res.body) ??
    (!ERROR_NAMES[status] || res.body.error === ERROR_NAMES[status] ? null : `error is ${JSON.stringify(res.body.error)}`);
  return problem ? [`${what}: ${status} without the spec's error body: ${problem}`] : [];
}
/** A response that got past authentication and authorization. */
function expectAdmitted(res: TestResponse, what: string): string[] {
  return res.status === 401 || res.status === 403 ? [`${what}: expected to pass auth, got ${res.status} ${JSON.stringify(res.body)}`] : [];
}

describe("every route, by its auth spec", () => {
  test("the table is data: every route carries its spec and is in the OpenAPI document", () => {
    const keys = ROUTES.map(routeKey);
    expect(new Set(keys).size).toBe(ROUTES.length);
    for (const r of ROUTES) expect(["NONE", "KEY", "JWT", "KEY_OR_JWT", "OPERATOR"], routeKey(r)).toContain(specOf(r)?.auth);
    const documented = operationsOf(doc)
      .map((o) => `${o.method} ${o.path}`)
      .sort();
    expect(documented).toEqual([...keys].sort());
  });

  test("no credential: 401 with the spec's error body (NONE routes: any error has that body)", async () => {
    const failures: string[] = [];
    for (const r of ROUTES) {
      const res = await call(r, caller, {});
      if (specOf(r).auth !== "NONE") failures.push(...expectError(res, 401, routeKey(r)));
      else if (res.status >= 400) failures.push(...expectError(res, res.status, routeKey(r)));
      mark(r, "no credential");
    }
    expect(failures).toEqual([]);
  });

  test("an unknown or revoked API key: 401", async () => {
    const revoked = await t.request("POST", "/v1/api-keys", { body: { name: "to revoke" }, headers: bearer(caller.token) });
    expect((await t.request("DELETE", `/v1/api-keys/${revoked.body.id}`, { headers: bearer(caller.token) })).status).toBeLessThan(300);
    const failures: string[] = [];
    for (const r of ROUTES) {
      if (specOf(r).auth === "NONE") continue;
      for (const [label, key] of [
        ["unknown key", "sk_test_not-a-real-key-0000000000000000"],
        ["revoked key", revoked.body.key as string],
      ] as const) {
        failures.push(...expectError(await call(r, caller, { "x-api-key": key }), 401, `${routeKey(r)} with a ${label}`));
      }
      mark(r, "bad key");
    }
    expect(failures).toEqual([]);
  });

  test("an expired, forged or malformed session: 401", async () => {
    const owner = { id: caller.userId, tenantId: caller.tenantId, role: "OWNER" as const, sessionVersion: 0 };
    const hourAgo = new Date(Date.now() - 2 * 3600_000);
    const expired = (await issueSessionToken(owner, t.deps.jwtSecret, hourAgo, 3600)).accessToken;
    const forged = (await issueSessionToken(owner, "not-the-secret-not-the-secret-not-the-secret", new Date(), 3600)).accessToken;
    const failures: string[] = [];
    for (const r of ROUTES) {
      if (specOf(r).auth === "NONE") continue;
      for (const [label, token] of [
        ["expired", expired],
        ["forged", forged],
        ["malformed", "not.a.jwt"],
      ] as const) {
        failures.push(...expectError(await call(r, caller, bearer(token)), 401, `${routeKey(r)} with an ${label} session`));
      }
      mark(r, "bad session");
    }
    expect(failures).toEqual([]);
  });

  test("a valid session on a key-only route: 401; a MEMBER on an Owner/Admin route: 403, elsewhere admitted", async () => {
    const failures: string[] = [];
    for (const r of ROUTES) {
      const spec = specOf(r);
      if (spec.auth === "NONE") continue;
      const res = await call(r, caller, bearer(caller.member.token));
      const what = `${routeKey(r)} as MEMBER`;
      if (!acceptsSession(spec)) failures.push(...expectError(res, 401, what));
      else if (spec.roles && !spec.roles.includes("MEMBER")) failures.push(...expectError(res, 403, what));
      else failures.push(...expectAdmitted(res, what));
      mark(r, "member");
    }
    expect(failures).toEqual([]);
  });

  test("an API key on a dashboard-only route: 401 (403 where the route authenticates keys but its roles exclude them)", async () => {
    const failures: string[] = [];
    for (const r of ROUTES) {
      const spec = specOf(r);
      if (spec.auth === "NONE") continue;
      const res = await call(r, caller, apiKey(caller.key));
      const what = `${routeKey(r)} with an API key`;
      if (!acceptsKey(spec)) failures.push(...expectError(res, 401, what));
      else if (spec.roles && !spec.rolesAllowApiKey) failures.push(...expectError(res, 403, what));
      else failures.push(...expectAdmitted(res, what));
      mark(r, "api key");
    }
    expect(failures).toEqual([]);
  });

  test("another tenant's real id in every path parameter: 404 (and the caller's own id is found)", async () => {
    const failures: string[] = [];
    const unknownParams: string[] = [];
    for (const r of ROUTES) {
      const names = paramNames(r.route.path);
      if (names.length === 0) continue;
      for (const name of names) {
        const resources = PARAM_RESOURCES[paramKey(r.route.path, name)];
        if (!resources) {
          unknownParams.push(`${routeKey(r)}: {${name}}`);
          continue;
        }
        // The operator acts on every tenant: its boundary is the operator key (checked above), and an id naming no tenant is 404.
        if (isOperator(r)) {
          failures.push(
            ...expectError(await call(r, caller, ownerCredential(r, caller), { [name]: crypto.randomUUID() }), 404, `${routeKey(r)} with an unknown ${name}`),
          );
          continue;
        }
        for (const theirs of resources(victim)) {
          const what = `${routeKey(r)} with the other tenant's ${name} ${theirs}`;
          const res = await call(r, caller, ownerCredential(r, caller), { [name]: theirs });
          if (READS_OWN_LEDGER.has(routeKey(r))) {
            if (res.status !== 200 || res.body.balance !== "0.000000") failures.push(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
            const own = await call(r, victim, ownerCredential(r, victim), { [name]: theirs });
            if (own.body?.balance === "0.000000") failures.push(`${what}: its own tenant does not see the wallet's balance either`);
          } else if (CREATES_ON_FIRST_USE.has(routeKey(r))) {
            if (res.status >= 400 || res.body?.id === victim.borrowerId) failures.push(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
            const after = await t.request("GET", `/v1/borrowers/${victim.borrowerId}`, { headers: apiKey(victim.key) });
            if (after.body.kycAudit?.length !== 0) failures.push(`${what}: changed the other tenant's borrower ${JSON.stringify(after.body)}`);
          } else {
            failures.push(...expectError(res, 404, what));
          }
        }
      }
      mark(r, "other tenant's id");
    }
    expect(unknownParams, "path parameters the suite cannot seed: add them to seededTenant and PARAM_RESOURCES (shared/testing/seeded-tenant.ts)").toEqual([]);
    expect(failures).toEqual([]);
  });

  test("another mode's real id: a live key of the same tenant gets 404 for every sandbox loan, settlement, event, notification, webhook endpoint, delivery and credit line", async () => {
    const own = await seededTenant(t, "Other mode");
    await t.db.update(tenants).set({ certifiedAt: new Date() }).where(eq(tenants.id, own.tenantId));
    const created = await t.request("POST", "/v1/api-keys", { body: { name: "live", mode: "live" }, headers: bearer(own.token) });
    expect(created.status).toBe(201);
    const failures: string[] = [];
    for (const r of ROUTES) {
      const moded = paramNames(r.route.path).filter((name) => MODE_SCOPED_PARAMS.has(paramKey(r.route.path, name)));
      if (moded.length === 0 || !acceptsKey(specOf(r))) continue;
      // The seeded ids are all of the sandbox (the seeded loan is on POLYGON_AMOY).
      failures.push(...expectError(await call(r, own, apiKey(created.body.key)), 404, `${routeKey(r)} with a live key and sandbox ${moded.join(", ")}`));
      mark(r, "other mode's id");
    }
    expect(failures).toEqual([]);
  });

  test("control: with its own ids, the same calls are not 404 (so the 404s above are the tenant boundary)", async () => {
    const own = await seededTenant(t, "Control");
    const failures: string[] = [];
    // DELETEs last: they remove resources the other calls name.
    const routes = ROUTES.filter((r) => paramNames(r.route.path).length > 0).sort(
      (x, y) => Number(x.route.method === "delete") - Number(y.route.method === "delete"),
    );
    for (const r of routes) {
      const res = await call(r, own, ownerCredential(r, own));
      if (res.status === 404 || res.status === 401 || res.status === 403)
        failures.push(`${routeKey(r)} with its own ids: ${res.status} ${JSON.stringify(res.body)}`);
    }
    expect(failures).toEqual([]);
  });

  test("the operator key: a wrong one is 401 on operator routes; on every other route it is no credential (401) and grants nothing", async () => {
    const failures: string[] = [];
    for (const r of ROUTES) {
      const spec = specOf(r);
      if (spec.auth === "NONE") continue;
      if (isOperator(r)) {
        for (const wrong of ["svc_operator_wrong", `${DEV_OPERATOR_KEY}x`, DEV_OPERATOR_KEY.slice(0, -1), ""]) {
          failures.push(
            ...expectError(await call(r, caller, { [OPERATOR_KEY_HEADER]: wrong }), 401, `${routeKey(r)} with operator key ${JSON.stringify(wrong)}`),
          );
        }
        failures.push(...expectAdmitted(await call(r, caller, ownerCredential(r, caller)), `${routeKey(r)} with the operator key`));
      } else {
        failures.push(...expectError(await call(r, caller, { [OPERATOR_KEY_HEADER]: DEV_OPERATOR_KEY }), 401, `${routeKey(r)} with only the operator key`));
      }
      mark(r, "operator key");
    }
    expect(failures).toEqual([]);
  });

  test("mode-restricted routes: the sandbox helpers are marked sandbox-only, and a key of the other mode gets 403", async () => {
    const unmarked = ROUTES.filter((r) => r.route.path.startsWith("/v1/sandbox/") && specOf(r).mode !== "sandbox").map(routeKey);
    expect(unmarked, 'routes under /v1/sandbox/ must declare mode: "sandbox"').toEqual([]);
    // One tenant with a key of each mode (DECISIONS.md "Modes"): certified in the database (the
    // certification flow is tested on its own), then a live key through the API. The request acts
    // in its key's mode, so the same tenant's sandbox key is admitted where its live key is refused.
    const sandbox = await seededTenant(t, "Modes");
    await t.db.update(tenants).set({ certifiedAt: new Date() }).where(eq(tenants.id, sandbox.tenantId));
    const created = await t.request("POST", "/v1/api-keys", { body: { name: "live", mode: "live" }, headers: bearer(sandbox.token) });
    expect(created.status).toBe(201);
    expect(created.body.key).toStartWith("svc_live_");
    const live: SeededTenant = { ...sandbox, key: created.body.key };
    const failures: string[] = [];
    for (const r of ROUTES) {
      const mode = specOf(r).mode;
      if (!mode) continue;
      expect(acceptsKey(specOf(r)), `${routeKey(r)}: a mode-restricted route takes API keys, whose mode it checks`).toBe(true);
      const [wrong, right] = mode === "sandbox" ? [live, sandbox] : [sandbox, live];
      failures.push(...expectError(await call(r, wrong, apiKey(wrong.key)), 403, `${routeKey(r)} with a ${mode === "sandbox" ? "live" : "sandbox"} key`));
      failures.push(...expectAdmitted(await call(r, right, apiKey(right.key)), `${routeKey(r)} with a ${mode} key`));
      mark(r, "mode");
    }
    expect(failures).toEqual([]);
  });

  test("what the worker answers is in the document: a body route's 413 and 415, a mode filter's 403, login's 401", async () => {
    const failures: string[] = [];
    const documented = (r: ApiRouteModule) => Object.keys(doc.paths[r.route.path]?.[r.route.method]?.responses ?? {}).map(Number);
    for (const r of ROUTES) {
      const spec = specOf(r);
      const headers = spec.auth === "NONE" ? {} : ownerCredential(r, caller);
      if (r.route.request?.body) {
        const path = pathFor(r, caller);
        const method = r.route.method.toUpperCase();
        const plain = await t.request(method, path, { headers: { ...headers, "content-type": "text/plain" }, rawBody: JSON.stringify(bodyFor(r, caller)) });
        failures.push(...expectError(plain, 415, `${routeKey(r)} with a text/plain body`));
        const big = await t.request(method, path, {
          headers: { ...headers, "content-type": "application/json" },
          rawBody: JSON.stringify({ pad: "x".repeat(70_000) }),
        });
        failures.push(...expectError(big, 413, `${routeKey(r)} with a 70 KB body`));
        for (const status of [413, 415]) if (!documented(r).includes(status)) failures.push(`${routeKey(r)}: ${status} not documented`);
      }
      const query = r.route.request?.query as { shape?: Record<string, unknown> } | undefined;
      if (query?.shape?.mode && acceptsKey(spec)) {
        // The caller's key is a sandbox key: live data is not its to read.
        const res = await t.request("GET", `${pathFor(r, caller)}?mode=live`, { headers: apiKey(caller.key) });
        failures.push(...expectError(res, 403, `${routeKey(r)} ?mode=live with a sandbox key`));
        if (!documented(r).includes(403)) failures.push(`${routeKey(r)}: 403 not documented`);
      }
    }
    const login = ROUTES.find((r) => r.route.path === "/v1/auth/login")!;
    const wrong = await t.request("POST", "/v1/auth/login", { body: { email: uniqueEmail("nobody"), password: "not the password at all" } });
    failures.push(...expectError(wrong, 401, "login with wrong credentials"));
    if (!documented(login).includes(401)) failures.push("POST /v1/auth/login: 401 not documented");
    expect(failures).toEqual([]);
  });

  test("every route went through every check that applies to it", () => {
    const missing: string[] = [];
    for (const r of ROUTES) {
      const spec = specOf(r);
      const expected = ["no credential"];
      if (spec.auth !== "NONE") expected.push("bad key", "bad session", "member", "api key", "operator key");
      if (paramNames(r.route.path).length > 0) expected.push("other tenant's id");
      if (spec.mode) expected.push("mode");
      if (acceptsKey(spec) && paramNames(r.route.path).some((name) => MODE_SCOPED_PARAMS.has(paramKey(r.route.path, name)))) expected.push("other mode's id");
      const got = exercised.get(routeKey(r)) ?? new Set();
      for (const check of expected) if (!got.has(check)) missing.push(`${routeKey(r)}: ${check}`);
    }
    expect(exercised.size).toBe(ROUTES.length);
    expect(missing).toEqual([]);
  });
});
