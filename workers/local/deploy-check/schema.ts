import type { JsonSchema, Problem, Verdict, WorkerFacts } from "./facts.ts";

/**
 * Rule 1: the config validates against wrangler's own JSON schema. Unknown
 * keys are errors (the schema says `additionalProperties: false`; wrangler
 * itself only warns, and then asks the npm registry for a newer version).
 */
export function schemaRule(workers: WorkerFacts[], schema: JsonSchema): Verdict {
  const problems: Problem[] = [];
  for (const w of workers) {
    for (const e of validate(w.config, schema, schema, ""))
      problems.push({ rule: "schema", file: w.configPath, field: e.path || "(top level)", message: e.message });
  }
  return { problems, notes: [] };
}

type SchemaError = { path: string; message: string };

const typeOf = (value: unknown): string => {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
};

const matchesType = (value: unknown, type: string): boolean => {
  const actual = typeOf(value);
  return actual === type || (type === "number" && actual === "integer");
};

const join = (path: string, key: string | number): string => (typeof key === "number" ? `${path}[${key}]` : path ? `${path}.${key}` : key);

function resolve(schema: JsonSchema, root: JsonSchema): JsonSchema {
  let s = schema;
  for (let i = 0; s.$ref && i < 20; i++) {
    const name = s.$ref.replace(/^#\/definitions\//, "");
    const target = root.definitions?.[name];
    if (!target) throw new Error(`wrangler's schema has no definition ${s.$ref}`);
    s = target;
  }
  return s;
}

/** Validates `value` against `schema`: every error with its field path (pure; the subset of JSON Schema wrangler's schema uses). */
export function validate(value: unknown, schemaOrRef: JsonSchema, root: JsonSchema, path: string): SchemaError[] {
  const schema = resolve(schemaOrRef, root);
  if (schema.anyOf) {
    const branches = schema.anyOf.map((branch) => validate(value, branch, root, path));
    if (branches.some((errors) => errors.length === 0)) return [];
    // The branch with the fewest errors is the shape the author most likely meant.
    const closest = branches.reduce((best, errors) => (errors.length < best.length ? errors : best));
    return closest.length > 0 ? closest : [{ path, message: "matches none of the allowed shapes" }];
  }
  if ("const" in schema && JSON.stringify(value) !== JSON.stringify(schema.const)) return [{ path, message: `must be ${JSON.stringify(schema.const)}` }];
  if (schema.enum && !schema.enum.some((allowed) => JSON.stringify(allowed) === JSON.stringify(value))) {
    return [{ path, message: `must be one of ${schema.enum.map((v) => JSON.stringify(v)).join(", ")}, not ${JSON.stringify(value)}` }];
  }
  if (schema.type) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => matchesType(value, t))) return [{ path, message: `must be ${types.join(" or ")}, not ${typeOf(value)}` }];
  }
  const errors: SchemaError[] = [];
  if (typeOf(value) === "object") {
    const record = value as Record<string, unknown>;
    for (const key of schema.required ?? []) if (!(key in record)) errors.push({ path: join(path, key), message: "is required" });
    for (const [key, child] of Object.entries(record)) {
      const known = schema.properties?.[key];
      if (known) errors.push(...validate(child, known, root, join(path, key)));
      else if (schema.additionalProperties === false) errors.push({ path: join(path, key), message: "unknown key (not in wrangler's config schema)" });
      else if (schema.additionalProperties && typeof schema.additionalProperties === "object") {
        errors.push(...validate(child, schema.additionalProperties, root, join(path, key)));
      }
    }
  }
  if (Array.isArray(value) && schema.items) {
    const items = schema.items;
    value.forEach((item, i) => {
      const itemSchema = Array.isArray(items) ? items[i] : items;
      if (itemSchema) errors.push(...validate(item, itemSchema, root, join(path, i)));
    });
    if (Array.isArray(items) && value.length > items.length) errors.push({ path, message: `has ${value.length} items, at most ${items.length} allowed` });
  }
  return errors;
}
