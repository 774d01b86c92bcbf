/**
 * The part of @jridgewell/trace-mapping that bench/profile.ts uses. Its own
 * types are in the package, but its package.json's "exports" do not name
 * them, so TypeScript's bundler resolution cannot find them.
 */
declare module "@jridgewell/trace-mapping" {
  export class TraceMap {
    constructor(map: string | object);
  }
  export function originalPositionFor(map: TraceMap, needle: { line: number; column: number }): { source: string | null; line: number | null };
}
