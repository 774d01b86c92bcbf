import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** Git-ignored: generated clients, bundles and compiler inputs of the README tests. */
export const ARTIFACTS = `${ROOT}test-artifacts/`;

type OpenApiTs = { default: (schema: object) => Promise<unknown>; astToString: (ast: unknown) => string };

/**
 * `openapi-typescript`'s Node API. It builds its output with the TypeScript 5
 * compiler API, which the TypeScript 7 this repository compiles with no longer
 * has (its package is the native `tsc` only). So the package is installed with
 * the `typescript-5` alias beside it (package.json `overrides` keeps npm from
 * refusing the peer), and bundled here with `typescript` resolved to that alias.
 * A merchant's `npx openapi-typescript` gets TypeScript 5 as its own peer.
 */
export async function loadOpenApiTypescript(): Promise<OpenApiTs> {
  const ts5 = Bun.resolveSync("typescript-5", ROOT);
  const built = await Bun.build({
    entrypoints: [Bun.resolveSync("openapi-typescript", ROOT)],
    target: "bun",
    outdir: `${ARTIFACTS}openapi-typescript`,
    plugins: [{ name: "typescript-5", setup: (build) => void build.onResolve({ filter: /^typescript$/ }, () => ({ path: ts5 })) }],
  });
  if (!built.success) throw new AggregateError(built.logs, "bundling openapi-typescript failed");
  return import(built.outputs[0]!.path);
}

/** TypeScript types (`paths`, `components`, `operations`) for an OpenAPI document, as `npx openapi-typescript` writes them. */
export async function generateTypes(document: object): Promise<string> {
  const { default: openapiTS, astToString } = await loadOpenApiTypescript();
  return astToString(await openapiTS(document));
}

/** Runs the repository's `tsc` on a project; its diagnostics, or "" when it compiles. */
export async function typeCheck(tsconfigPath: string): Promise<{ exitCode: number; output: string }> {
  const proc = Bun.spawn([`${ROOT}node_modules/.bin/tsc`, "--noEmit", "-p", tsconfigPath], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { exitCode, output: (stdout + stderr).trim() };
}
