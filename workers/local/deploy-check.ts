import { resolve } from "node:path";
import { checkDeploy, formatProblem } from "./deploy-check/check.ts";
import { gatherFacts } from "./deploy-check/gather.ts";

/**
 * `npm run deploy:check` (and `.ci/run`, after `npm run build`): checks the
 * four wrangler configs against the code offline. Exits 1 naming every
 * broken rule, file and field. The rules are in workers/local/deploy-check/.
 */
if (import.meta.main) {
  const started = performance.now();
  const facts = await gatherFacts(process.argv[2] ? resolve(process.argv[2]) : undefined);
  const { problems, notes } = checkDeploy(facts, { requireBuild: true });
  for (const note of notes) console.log(`  ${note}`);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (problems.length > 0) {
    console.error(`\ndeploy check failed: ${problems.length} problem(s)`);
    for (const p of problems) console.error(`  ${formatProblem(p)}`);
    process.exit(1);
  }
  console.log(`deploy check passed: ${facts.workers.length} configs in ${seconds} s`);
}
