import { asArray, asRecord, type Config, type Migration, type Problem, type Verdict, type WorkerFacts } from "./facts.ts";

type DoBinding = { name: string; class_name: string; script_name?: string };

export const migrationsOf = (config: Config): Migration[] => asArray<Migration>(config.migrations);
export const doBindingsOf = (config: Config): DoBinding[] => asArray<DoBinding>(asRecord(config.durable_objects).bindings);

/** The classes a worker's migrations leave in place, applied in order (created, renamed, transferred in; deleted out). */
export function migratedClasses(migrations: Migration[]): Set<string> {
  const live = new Set<string>();
  for (const m of migrations) {
    for (const c of [...(m.new_classes ?? []), ...(m.new_sqlite_classes ?? [])]) live.add(c);
    for (const { from, to } of m.renamed_classes ?? []) {
      live.delete(from);
      live.add(to);
    }
    for (const { to } of m.transferred_classes ?? []) live.add(to);
    for (const c of m.deleted_classes ?? []) live.delete(c);
  }
  return live;
}

/**
 * Rule 2a: every Durable Object class the entry exports is created by a
 * `[[migrations]]` entry (else the deploy fails or, worse, binds a class the
 * platform has no storage for), and every migrated class is still exported.
 */
export function migrationsCoverExportsRule(workers: WorkerFacts[]): Verdict {
  const problems: Problem[] = [];
  for (const w of workers) {
    const live = migratedClasses(migrationsOf(w.config));
    const main = String(w.config.main ?? "");
    for (const cls of w.durableObjectClasses) {
      if (!live.has(cls)) {
        problems.push({
          rule: "do-migrations",
          file: w.configPath,
          field: "migrations",
          message: `Durable Object class ${cls} (exported by ${main}) is in no [[migrations]] entry (new_sqlite_classes)`,
        });
      }
    }
    for (const cls of live) {
      if (!w.durableObjectClasses.includes(cls)) {
        problems.push({
          rule: "do-migrations",
          file: w.configPath,
          field: "migrations",
          message: `migrated class ${cls} is not a Durable Object class ${main} exports (delete it with a deleted_classes migration)`,
        });
      }
    }
  }
  return { problems, notes: [] };
}

const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );

/**
 * Rule 2b: migrations are append-only. Against the previous commit's config,
 * no entry is removed, reordered or edited (the platform has applied them;
 * editing one changes nothing there but the record of what it did).
 */
export function migrationTagsRule(workers: WorkerFacts[]): Verdict {
  const problems: Problem[] = [];
  const notes: string[] = [];
  for (const w of workers) {
    const before = w.previousMigrations;
    if (before === null) {
      notes.push(`${w.configPath}: no previous commit to compare [[migrations]] with; tags not checked`);
      continue;
    }
    const now = migrationsOf(w.config);
    const nowTags = now.map((m) => m.tag);
    before.forEach((old, i) => {
      const field = `migrations[${i}]`;
      const at = nowTags.indexOf(old.tag);
      if (at === -1) problems.push({ rule: "migration-tags", file: w.configPath, field, message: `tag ${old.tag} was removed (migrations are append-only)` });
      else if (at !== i)
        problems.push({
          rule: "migration-tags",
          file: w.configPath,
          field,
          message: `tag ${old.tag} moved from position ${i} to ${at} (migrations are append-only)`,
        });
      else if (canonical(old) !== canonical(now[i]))
        problems.push({ rule: "migration-tags", file: w.configPath, field, message: `tag ${old.tag} was edited (migrations are append-only: add a new tag)` });
    });
    const seen = new Set<string | undefined>();
    now.forEach((m, i) => {
      if (seen.has(m.tag)) problems.push({ rule: "migration-tags", file: w.configPath, field: `migrations[${i}].tag`, message: `tag ${m.tag} appears twice` });
      seen.add(m.tag);
    });
  }
  return { problems, notes };
}

/**
 * Rule 3: a binding with `script_name` points at a worker of this repository
 * (by `name`) that hosts the class: binds it without `script_name` and has it
 * in its migrations. A binding without `script_name` binds a class this
 * worker exports.
 */
export function scriptNameRule(workers: WorkerFacts[]): Verdict {
  const problems: Problem[] = [];
  const byName = new Map(workers.map((w) => [String(w.config.name), w]));
  for (const w of workers) {
    doBindingsOf(w.config).forEach((b, i) => {
      const field = `durable_objects.bindings[${i}] (${b.name})`;
      if (b.script_name === undefined) {
        if (!w.durableObjectClasses.includes(b.class_name)) {
          problems.push({
            rule: "do-script-name",
            file: w.configPath,
            field,
            message: `class ${b.class_name} has no script_name, but ${String(w.config.main)} does not export it`,
          });
        }
        return;
      }
      const host = byName.get(b.script_name);
      if (!host) {
        problems.push({
          rule: "do-script-name",
          file: w.configPath,
          field,
          message: `script_name ${b.script_name} names no worker in this repository (names: ${[...byName.keys()].join(", ")})`,
        });
        return;
      }
      if (!doBindingsOf(host.config).some((hb) => hb.class_name === b.class_name && hb.script_name === undefined)) {
        problems.push({
          rule: "do-script-name",
          file: w.configPath,
          field,
          message: `${b.script_name} (${host.configPath}) declares no binding of class ${b.class_name} without script_name`,
        });
      }
      if (!migratedClasses(migrationsOf(host.config)).has(b.class_name)) {
        problems.push({
          rule: "do-script-name",
          file: w.configPath,
          field,
          message: `${b.script_name} (${host.configPath}) has no migration for class ${b.class_name}`,
        });
      }
    });
  }
  return { problems, notes: [] };
}
