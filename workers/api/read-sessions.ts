import { primaryOnly, type ReadSessions } from "../../db/read-session.ts";
import type { ApiDeps } from "./deps.ts";

/** The deps' read sessions, or the primary for each (test deps without replication). */
export const readSessionsOf = (deps: Pick<ApiDeps, "db" | "readSessions">): ReadSessions => deps.readSessions ?? primaryOnly(deps.db);
