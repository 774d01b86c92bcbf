import type { Db } from "../../db/create-db.ts";
import type { ChainPort } from "../chains/chain-port.ts";
import type { Clock } from "../domain/clock.ts";

/** What loan verbs need: the database, the chains, and the system clock (tenant clocks derive from it). */
export type LoanContext = { db: Db; chain: ChainPort; clock: Clock };
