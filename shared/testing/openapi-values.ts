import fc from "fast-check";

/** The parts of an OpenAPI 3.1 document the test generators read. */
export type JsonSchema = { [key: string]: any };
export type OpenApiDoc = { paths: Record<string, Record<string, OpenApiOperation>>; components?: { schemas?: Record<string, JsonSchema> } };
export type OpenApiParameter = { name: string; in: "path" | "query" | "header" | "cookie"; required?: boolean; schema?: JsonSchema };
export type OpenApiOperation = {
  parameters?: OpenApiParameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> };
  responses: Record<string, unknown>;
  security?: Record<string, string[]>[];
};

/** One documented operation of a document. */
export type DocumentedOperation = { method: string; path: string; op: OpenApiOperation; body: JsonSchema | null };

/** Every operation of `doc`, with its JSON request schema resolved. */
export function operationsOf(doc: OpenApiDoc): DocumentedOperation[] {
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => {
      const body = op.requestBody?.content?.["application/json"]?.schema;
      return { method: method.toUpperCase(), path, op, body: body ? deref(doc, body) : null };
    }),
  );
}

/** Follows `$ref`s into `components.schemas`. */
export function deref(doc: OpenApiDoc, schema: JsonSchema): JsonSchema {
  let s = schema;
  for (let i = 0; s.$ref && i < 20; i++) {
    const name = String(s.$ref).replace("#/components/schemas/", "");
    const target = doc.components?.schemas?.[name];
    if (!target) throw new Error(`unresolved $ref ${s.$ref}`);
    s = target;
  }
  return s;
}

/**
 * Values chosen by property name wherever it appears (real ids of a seeded
 * tenant, addresses on the right chain…): a schema cannot say that a
 * `loanId` must exist, only that it is a string.
 */
export type Hints = Record<string, fc.Arbitrary<unknown>>;

const typesOf = (s: JsonSchema): string[] => (Array.isArray(s.type) ? s.type : s.type ? [s.type] : []);
const exampleOf = (s: JsonSchema): unknown[] => [...(s.example !== undefined ? [s.example] : []), ...(Array.isArray(s.examples) ? s.examples : [])];

/** Strings a zod `.trim()` keeps as they are (the documents do not say which fields trim). */
const trimmed = (a: fc.Arbitrary<string>) => a.filter((s) => s.trim() === s);

function stringArbitrary(s: JsonSchema): fc.Arbitrary<string> {
  const minLength = s.minLength ?? 0;
  const maxLength = Math.min(s.maxLength ?? 40, Math.max(minLength, 40));
  const fits = (v: string) => v.length >= minLength && v.length <= (s.maxLength ?? Infinity);
  if (s.format === "uuid") return fc.uuid({ version: 4 });
  if (s.format === "email")
    return fc.tuple(fc.stringMatching(/^[a-z][a-z0-9]{0,11}$/), fc.constantFrom("example.com", "merchant.example")).map(([u, d]) => `${u}@${d}`);
  if (s.format === "date-time") return fc.date({ min: new Date("2020-01-01"), max: new Date("2035-01-01"), noInvalidDate: true }).map((d) => d.toISOString());
  if (s.format === "uri") return fc.stringMatching(/^[a-z]{1,10}$/).map((p) => `https://cdn.merchant.example/${p}`);
  if (s.pattern) return fc.stringMatching(new RegExp(s.pattern)).filter(fits);
  return trimmed(fc.string({ minLength, maxLength })).filter(fits);
}

function numberArbitrary(s: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const min = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + (integer ? 1 : 1e-6) : -1000);
  const max = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - (integer ? 1 : 1e-6) : Math.max(min, 0) + 1000);
  return integer ? fc.integer({ min: Math.ceil(min), max: Math.floor(max) }) : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
}

/**
 * Values valid for `schema` (JSON Schema as the OpenAPI document states it):
 * enums, const, formats uuid/email/date-time/uri, patterns (such as the
 * amount pattern `^\d+(\.\d{1,2})?$`), lengths, bounds, arrays, nested objects,
 * nullable types and unions. A documented example is preferred (3 to 1), so
 * calls get past rules the document states only in words.
 */
export function validArbitrary(doc: OpenApiDoc, schema: JsonSchema, hints: Hints = {}): fc.Arbitrary<unknown> {
  const s = deref(doc, schema);
  const union = s.anyOf ?? s.oneOf;
  if (union) return fc.oneof(...(union as JsonSchema[]).map((u) => validArbitrary(doc, u, hints)));
  if (s.const !== undefined) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum);
  const types = typesOf(s);
  const generated = fc.oneof(...(types.length ? types : ["string"]).map((type) => byType(doc, s, type, hints)));
  const examples = exampleOf(s);
  return examples.length ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...examples) }, { weight: 1, arbitrary: generated }) : generated;
}

function byType(doc: OpenApiDoc, s: JsonSchema, type: string, hints: Hints): fc.Arbitrary<unknown> {
  switch (type) {
    case "null":
      return fc.constant(null);
    case "boolean":
      return fc.boolean();
    case "integer":
      return numberArbitrary(s, true);
    case "number":
      return numberArbitrary(s, false);
    case "array": {
      const items = validArbitrary(doc, s.items ?? {}, hints);
      const constraints = { minLength: s.minItems ?? 0, maxLength: Math.min(s.maxItems ?? 3, Math.max(s.minItems ?? 0, 3)) };
      return s.uniqueItems ? fc.uniqueArray(items, { ...constraints, selector: (v) => JSON.stringify(v) }) : fc.array(items, constraints);
    }
    case "object": {
      const properties = (s.properties ?? {}) as Record<string, JsonSchema>;
      const required = new Set<string>(s.required ?? []);
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, prop] of Object.entries(properties)) record[name] = hints[name] ?? validArbitrary(doc, prop, hints);
      return fc.record(record, { requiredKeys: Object.keys(properties).filter((k) => required.has(k)) });
    }
    default:
      return stringArbitrary(s);
  }
}

/**
 * The one value a reader would write from the document: the example, else the
 * default, else the first enum value, else a small value within the bounds;
 * objects carry every property that has a hint, an example or is required.
 */
export function canonicalValue(doc: OpenApiDoc, schema: JsonSchema, hints: Hints = {}): unknown {
  const s = deref(doc, schema);
  const union = s.anyOf ?? s.oneOf;
  if (union) return canonicalValue(doc, union[0], hints);
  const examples = exampleOf(s);
  if (examples.length) return examples[0];
  if (s.default !== undefined) return s.default;
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum)) return s.enum[0];
  const type = typesOf(s).find((t) => t !== "null") ?? "string";
  if (type === "object") {
    const out: Record<string, unknown> = {};
    const required = new Set<string>(s.required ?? []);
    for (const [name, prop] of Object.entries((s.properties ?? {}) as Record<string, JsonSchema>)) {
      if (hints[name]) out[name] = fc.sample(hints[name]!, { numRuns: 1, seed: 1 })[0];
      else if (required.has(name) || exampleOf(deref(doc, prop)).length) out[name] = canonicalValue(doc, prop, hints);
    }
    return out;
  }
  if (type === "array") return Array.from({ length: s.minItems ?? 1 }, () => canonicalValue(doc, s.items ?? {}, hints));
  return fc.sample(byType(doc, s, type, hints), { numRuns: 1, seed: 1 })[0];
}

/** A body the schema rejects, and the field (its path) the 400 must name. */
export type InvalidBody = { kind: "missing" | "wrong type" | "out of range"; field: string; body: Record<string, unknown> };

/**
 * Invalid variants of a valid object body: each required field left out, each
 * field given a value of the wrong type, and each bounded field pushed past its
 * bound (too long, too short, above the maximum, outside the enum or pattern).
 */
export function invalidBodies(doc: OpenApiDoc, schema: JsonSchema, valid: Record<string, unknown>): InvalidBody[] {
  const s = deref(doc, schema);
  const out: InvalidBody[] = [];
  const properties = (s.properties ?? {}) as Record<string, JsonSchema>;
  for (const name of (s.required ?? []) as string[]) {
    const { [name]: _dropped, ...rest } = valid;
    out.push({ kind: "missing", field: name, body: rest });
  }
  for (const [name, raw] of Object.entries(properties)) {
    const prop = deref(doc, raw);
    const types = typesOf(prop);
    if (!types.length && !prop.enum) continue;
    const wrong = types.includes("object") || types.includes("array") ? 12345 : types.includes("string") || prop.enum ? { not: "a string" } : "not a number";
    out.push({ kind: "wrong type", field: name, body: { ...valid, [name]: wrong } });
    const past = pastBound(prop);
    if (past !== undefined) out.push({ kind: "out of range", field: name, body: { ...valid, [name]: past } });
  }
  return out;
}

function pastBound(s: JsonSchema): unknown {
  if (Array.isArray(s.enum)) return "NOT_IN_THE_ENUM";
  if (typeof s.maximum === "number") return typesOf(s).includes("integer") ? s.maximum + 1 : s.maximum * 2 + 1;
  if (typeof s.minimum === "number") return s.minimum - 1;
  if (typeof s.maxLength === "number") return "x".repeat(s.maxLength + 1);
  if (s.pattern === "^\\d+(\\.\\d{1,2})?$" || s.pattern === "^\\d+(\\.\\d{1,6})?$") return "1.2345678";
  if (s.format === "uuid") return "not-a-uuid";
  if (typeof s.maxItems === "number") return Array.from({ length: s.maxItems + 1 }, () => "x");
  return undefined;
}

/** The spec's error body: `{ statusCode: <the HTTP status>, message: string | string[], error: string }`. */
export function errorBodyProblem(status: number, body: unknown): string | null {
  if (typeof body !== "object" || body === null) return `not a JSON object: ${JSON.stringify(body)}`;
  const b = body as Record<string, unknown>;
  if (b.statusCode !== status) return `statusCode ${JSON.stringify(b.statusCode)} is not the HTTP status ${status}`;
  const message = b.message;
  const okMessage = typeof message === "string" || (Array.isArray(message) && message.length > 0 && message.every((m) => typeof m === "string"));
  if (!okMessage) return `message is not a string or a list of strings: ${JSON.stringify(message)}`;
  if (typeof b.error !== "string" || b.error.length === 0) return `error is not a string: ${JSON.stringify(b.error)}`;
  const extra = Object.keys(b).filter((k) => !["statusCode", "message", "error"].includes(k));
  return extra.length ? `unexpected keys ${extra.join(", ")}` : null;
}
