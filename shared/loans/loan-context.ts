import type { VerbDeps } from "../verbs.ts";

/** What loan verbs need: the database, the chains, and the system clock (tenant clocks derive from it). */
export type LoanContext = Pick<VerbDeps, "db" | "chain" | "clock">;
