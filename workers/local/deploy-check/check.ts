import { bundleSizeRule, dryRunWarningsRule } from "./build-output.ts";
import { cronsRule } from "./crons.ts";
import { migrationsCoverExportsRule, migrationTagsRule, scriptNameRule } from "./durable-objects.ts";
import { envBindingsRule } from "./env-bindings.ts";
import type { DeployFacts, Problem, Verdict } from "./facts.ts";
import { queuesRule } from "./queues.ts";
import { schemaRule } from "./schema.ts";

/** Every rule over the gathered facts (pure). `requireBuild`: a missing `npm run build` output is a problem, not a note. */
export function checkDeploy(facts: DeployFacts, options: { requireBuild: boolean }): Verdict {
  const verdicts = [
    schemaRule(facts.workers, facts.schema),
    migrationsCoverExportsRule(facts.workers),
    migrationTagsRule(facts.workers),
    scriptNameRule(facts.workers),
    envBindingsRule(facts.workers, facts.optionalSettings),
    queuesRule(facts.workers),
    cronsRule(facts.workers, facts.cronWorker, facts.jobs),
    dryRunWarningsRule(facts.workers, options.requireBuild),
    bundleSizeRule(facts.workers),
  ];
  return { problems: verdicts.flatMap((v) => v.problems), notes: verdicts.flatMap((v) => v.notes) };
}

/** One line per problem: `[rule] file field: message`. */
export const formatProblem = (p: Problem): string => `[${p.rule}] ${p.file} ${p.field}: ${p.message}`;
