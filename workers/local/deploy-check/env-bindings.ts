import { asArray, asRecord, type Problem, type Verdict, type WorkerFacts } from "./facts.ts";

/** The config's `secrets.required` names (wrangler's experimental list of secrets a deploy needs). */
export const requiredSecretsOf = (config: Record<string, unknown>): string[] => asArray<string>(asRecord(config.secrets).required);

/**
 * Rule 4: the bindings the code uses equal the bindings the config declares,
 * both ways. Declared = what `wrangler types` generates for the config
 * (bindings, `[vars]`, and `secrets.required`), plus `secrets.required` read
 * from the config itself. Every declared name is a property of the worker's
 * hand-written Env type; every Env property is declared, unless it is one of
 * the worker's optional settings (optional-settings.ts: vars and secrets a
 * deploy may leave unset), which must then be optional (`?`) in the type.
 */
export function envBindingsRule(workers: WorkerFacts[], optionalSettings: Record<string, readonly string[]>): Verdict {
  const problems: Problem[] = [];
  const notes: string[] = [];
  for (const w of workers) {
    if (!w.env) {
      problems.push({
        rule: "env-bindings",
        file: String(w.config.main),
        field: "export default",
        message: "no `satisfies ExportedHandler<Env>` names the worker's Env type",
      });
      continue;
    }
    const { typeName, file, properties } = w.env;
    const inType = new Map(properties.map((p) => [p.name, p]));
    const declared = new Set([...w.generatedEnv, ...requiredSecretsOf(w.config)]);
    const optional = new Set(optionalSettings[w.key] ?? []);
    for (const name of [...declared].sort()) {
      if (!inType.has(name))
        problems.push({ rule: "env-bindings", file: w.configPath, field: name, message: `declared here but absent from ${typeName} (${file})` });
    }
    for (const p of properties) {
      if (declared.has(p.name)) {
        if (optional.has(p.name))
          notes.push(`${w.configPath}: optional setting ${p.name} is now declared; drop it from the ${w.key} list in optional-settings.ts`);
        continue;
      }
      if (!optional.has(p.name)) {
        problems.push({
          rule: "env-bindings",
          file,
          field: `${typeName}.${p.name}`,
          message: `not declared in ${w.configPath} (no binding, [vars] entry or secrets.required name)`,
        });
      } else if (!p.optional) {
        problems.push({
          rule: "env-bindings",
          file,
          field: `${typeName}.${p.name}`,
          message: `an optional setting (optional-settings.ts) must be optional in ${typeName}, or be declared in ${w.configPath}`,
        });
      }
    }
    for (const name of optional) {
      if (!inType.has(name))
        problems.push({
          rule: "env-bindings",
          file: "workers/local/deploy-check/optional-settings.ts",
          field: `${w.key}.${name}`,
          message: `not a property of ${typeName} (${file}); drop it`,
        });
    }
  }
  return { problems, notes };
}
