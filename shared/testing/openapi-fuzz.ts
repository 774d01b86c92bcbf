import fc from "fast-check";
import { randomSource } from "../chaos/faults.ts";
import {
  canonicalValue,
  errorBodyProblem,
  invalidBodies,
  operationsOf,
  validArbitrary,
  type DocumentedOperation,
  type Hints,
  type OpenApiDoc,
} from "./openapi-values.ts";

type Response = { status: number; body: any; headers: Headers };

export type FuzzOptions = {
  doc: OpenApiDoc;
  request: (method: string, path: string, init: { body?: unknown; headers?: Record<string, string> }) => Promise<Response>;
  /** Real values for a path parameter (ids of a seeded tenant); null: the fuzzer cannot fill it (the run fails). */
  pathValues: (op: DocumentedOperation, name: string) => string[] | null;
  /** Credentials for the operation's `security` (an API key or an OWNER session), or none. */
  credentials: (op: DocumentedOperation, rng: () => number) => Record<string, string>;
  /** Values by property name for this operation's body (real ids, addresses, unique keys). */
  hints: (op: DocumentedOperation) => Hints;
  seed: number;
  /** Random valid bodies per operation, besides its canonical one. */
  validRuns: number;
};

/** What a fuzz run saw, and every broken rule it found (empty when the service behaved). */
export type FuzzReport = {
  failures: string[];
  valid: { calls: number; byStatus: Record<number, number>; rejected: string[] };
  invalid: { calls: number };
  unfillable: string[];
  operations: number;
};

/** A small seeded PRNG (mulberry32), so a run is reproducible from its seed. */
const prng = (seed: number) => randomSource(seed);

const isPage = (path: string) => !path.startsWith("/v1/");

/**
 * Calls every operation of an OpenAPI document with valid bodies generated
 * from its request schema (a canonical one from the examples, and
 * `validRuns` random ones), invalid ones (each required field missing, each
 * field of the wrong type or out of range, and arbitrary JSON), valid and
 * invalid query strings, and odd path segments, with real path ids and the credentials the
 * operation's security asks for. The rules checked on every answer: never
 * 5xx; every 4xx of the JSON API has the spec's error body with `statusCode`
 * equal to the HTTP status; an invalid body gets 400 naming its field.
 * DELETEs run last, so the resources the others name still exist.
 */
export async function fuzzDocument(o: FuzzOptions): Promise<FuzzReport> {
  const rng = prng(o.seed);
  const report: FuzzReport = { failures: [], valid: { calls: 0, byStatus: {}, rejected: [] }, invalid: { calls: 0 }, unfillable: [], operations: 0 };
  const ops = operationsOf(o.doc).sort((x, y) => Number(x.method === "DELETE") - Number(y.method === "DELETE"));
  let sampleSeed = o.seed;

  const check = (op: DocumentedOperation, what: string, res: Response) => {
    const label = `${op.method} ${op.path} ${what}`;
    if (res.status >= 500) report.failures.push(`${label}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    else if (res.status >= 400 && !(isPage(op.path) && String(res.headers.get("content-type")).includes("text/html"))) {
      const problem = errorBodyProblem(res.status, res.body);
      if (problem) report.failures.push(`${label}: ${res.status} without the spec's error body: ${problem}`);
    }
  };

  for (const op of ops) {
    report.operations++;
    const names = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
    const values: Record<string, string> = {};
    for (const name of names) {
      const v = o.pathValues(op, name);
      if (!v || v.length === 0) report.unfillable.push(`${op.method} ${op.path}: {${name}}`);
      else values[name] = v[Math.floor(rng() * v.length)]!;
    }
    const path = op.path.replace(/\{(\w+)\}/g, (_, n: string) => encodeURIComponent(values[n] ?? "x"));
    const queryParams = (op.op.parameters ?? []).filter((p) => p.in === "query" && p.schema);
    const send = (body: unknown, query = "") => o.request(op.method, `${path}${query}`, { body, headers: o.credentials(op, rng) });
    const hints = o.hints(op);

    // Valid: the canonical body, then random ones, each with a random valid query string.
    const validBodies: unknown[] = op.body
      ? [canonicalValue(o.doc, op.body, o.hints(op)), ...fc.sample(validArbitrary(o.doc, op.body, hints), { numRuns: o.validRuns, seed: ++sampleSeed })]
      : [undefined];
    for (const [i, body] of validBodies.entries()) {
      const query = validQuery(o.doc, queryParams, ++sampleSeed, i === 0);
      const res = await send(body, query);
      report.valid.calls++;
      report.valid.byStatus[res.status] = (report.valid.byStatus[res.status] ?? 0) + 1;
      if (res.status >= 400)
        report.valid.rejected.push(
          `${op.method} ${op.path}${query} ${JSON.stringify(body)?.slice(0, 200)} → ${res.status} ${JSON.stringify(res.body?.message)?.slice(0, 200)}`,
        );
      check(op, `valid ${JSON.stringify(body)}${query}`, res);
      // A valid body may break a business rule (4xx), but never the schema of a field it supplied as documented.
      if (res.status === 400 && i === 0 && Array.isArray(res.body?.message)) {
        // zod's own wording ("Invalid input: …", "Too small: …"); a verb's business rule words its own message.
        const shapeErrors = (res.body.message as string[]).filter((m) => /^[\w.]+: (Invalid|Too (small|big)|Unrecognized)/.test(m));
        if (shapeErrors.length)
          report.failures.push(`${op.method} ${op.path}: the canonical body ${JSON.stringify(body)} failed validation: ${shapeErrors.join("; ")}`);
      }
    }

    // Invalid bodies: 400 naming the field.
    if (op.body && typeof validBodies[0] === "object" && validBodies[0] !== null) {
      for (const bad of invalidBodies(o.doc, op.body, { ...(validBodies[0] as Record<string, unknown>) })) {
        const res = await send(bad.body);
        report.invalid.calls++;
        check(op, `${bad.kind} ${bad.field}`, res);
        const named = Array.isArray(res.body?.message) && (res.body.message as string[]).some((m) => m.startsWith(bad.field));
        // A string past its maxLength may also exceed the body limit: 413 is the right answer then.
        if (res.status === 413 && bad.kind === "out of range") continue;
        if (res.status !== 400 || !named)
          report.failures.push(
            `${op.method} ${op.path} with ${bad.kind} ${bad.field}: expected 400 naming ${bad.field}, got ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`,
          );
      }
      for (const junk of fc.sample(fc.jsonValue(), { numRuns: 3, seed: ++sampleSeed })) {
        const res = await send(junk);
        report.invalid.calls++;
        check(op, `junk ${JSON.stringify(junk).slice(0, 80)}`, res);
      }
    }

    // Unknown or malformed ids in the path: never a 5xx, always the error body.
    if (names.length > 0) {
      for (const segment of fc.sample(fc.oneof(fc.string({ minLength: 1 }), fc.uuid(), fc.constant("%00"), fc.constant("x".repeat(300))), {
        numRuns: 3,
        seed: ++sampleSeed,
      })) {
        const odd = op.path.replace(/\{(\w+)\}/g, (_, n: string) => (n === names.at(-1) ? encodeURIComponent(segment) : encodeURIComponent(values[n] ?? "x")));
        const res = await o.request(op.method, odd, { body: validBodies[0], headers: o.credentials(op, rng) });
        report.invalid.calls++;
        check(op, `path ${odd}`, res);
      }
    }

    // Invalid query values: never a 5xx, always the error body.
    for (const p of queryParams) {
      for (const bad of invalidQueryValues(p.schema!)) {
        const res = await send(validBodies[0], `?${p.name}=${encodeURIComponent(bad)}`);
        report.invalid.calls++;
        check(op, `query ${p.name}=${bad}`, res);
        if (!isPage(op.path) && res.status !== 400) report.failures.push(`${op.method} ${op.path}?${p.name}=${bad}: expected 400, got ${res.status}`);
      }
    }
  }
  return report;
}

/** A valid query string: required parameters always, optional ones at random (none with `requiredOnly`). */
function validQuery(doc: OpenApiDoc, params: { name: string; schema?: object; required?: boolean }[], seed: number, requiredOnly = false): string {
  const parts: string[] = [];
  for (const [i, p] of params.entries()) {
    if (p.name === "cursor" || p.name === "parent") continue; // opaque, or must be an allowed origin
    if (requiredOnly && !p.required) continue;
    const arbitrary = p.required ? validArbitrary(doc, p.schema!) : fc.option(validArbitrary(doc, p.schema!), { nil: undefined, freq: 2 });
    const [value] = fc.sample(arbitrary, { numRuns: 1, seed: seed * 31 + i });
    if (value !== undefined && value !== null) parts.push(`${p.name}=${encodeURIComponent(String(value))}`);
  }
  return parts.length ? `?${parts.join("&")}` : "";
}

function invalidQueryValues(schema: { type?: unknown; minimum?: number; maximum?: number; enum?: unknown[]; format?: string; maxLength?: number }): string[] {
  const out: string[] = [];
  if (schema.type === "integer" || schema.type === "number") {
    out.push("not-a-number");
    if (typeof schema.minimum === "number") out.push(String(schema.minimum - 1));
    if (typeof schema.maximum === "number") out.push(String(schema.maximum + 1));
  }
  if (Array.isArray(schema.enum)) out.push("NOT_IN_THE_ENUM");
  if (schema.format === "date-time") out.push("yesterday");
  if (typeof schema.maxLength === "number") out.push("x".repeat(schema.maxLength + 1));
  return out;
}
