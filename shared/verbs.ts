import type { Db } from "../db/create-db.ts";
import type { ChallengeStore } from "./agreements/challenge-store.ts";
import type { ChainPort } from "./chains/chain-port.ts";
import type { Clock } from "./domain/clock.ts";
import type { LoanWriter } from "./loans/loan-commands.ts";
import type { DeliveryQueue } from "./webhooks/messages.ts";

/**
 * The ports a verb may need, one name per concept. Every verb under shared/
 * has one shape, `verb(deps, input)`:
 *
 * - `deps` picks what it uses from these (`Pick<VerbDeps, "db" | "writer">`),
 *   so a route passes its worker's deps as they are and a test passes only
 *   what the verb touches.
 * - `input` is one object: the tenant (or its id), the values, and, for an
 *   embed verb, the resolved program as `program` (a `ProgramContext`; the
 *   program row itself is `program.program`).
 * - Time: a verb that acts for one tenant takes that tenant's time as
 *   `now: Date` in `input` (the caller reads `tenantClock(clock, tenant)`),
 *   so the sandbox offset is applied once, by the caller. A verb that spans
 *   tenants or moves a tenant's clock (the sweeps, the listener, the sandbox
 *   clock) takes the system `clock` in `deps` and derives each tenant's time.
 * - Not verbs, and positional on purpose: small readers that load one row
 *   (`loadLoan(db, tenantId, id)`, `loadTenant`, `programContext`,
 *   `currentPolicy`), builders of batch statements (`commitUpdate`,
 *   `eventInsertIf`) and pure views (`loanView(loan, now)`).
 *
 * @example await attributeUnmatched({ db, writer }, { tenantId, id, loanId, by })
 * @example await sweepDueLoans({ db, writer, clock }, { tenantId })
 */
export type VerbDeps = {
  db: Db;
  /** The single writer of each loan (its tenant's loan objects, durable-loan-writer.ts; in process in the Bun tier). */
  writer: LoanWriter;
  /** Single-use agreement challenges. */
  challenges: ChallengeStore;
  /** The chain port (transfers, payments, contract signatures). */
  chain: ChainPort;
  /** The system clock; a tenant's time is `tenantClock(clock, tenant)`. */
  clock: Clock;
  /** The webhook deliveries Queue. */
  queue: DeliveryQueue;
};
