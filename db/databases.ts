/**
 * Which D1 database a worker reads and writes: the seam of sharding (README
 * "Past one D1"). Today every worker binds one database, `DB`, holding
 * everything. Every production read of a D1 binding goes through this file
 * (db/databases.test.ts fails otherwise), and each call site names what it
 * is after, so a sharded deployment changes these functions and the call
 * sites they name, nothing else:
 *
 * - `controlDatabase`: what is looked up before the tenant is known, or
 *   across tenants (tenants, users, API keys, widget programs by embed key,
 *   the operator's lists).
 * - `tenantDatabase`: one tenant's rows (loans, borrowers, events,
 *   deliveries, settlements, ledgers). Its outbox `seq` is per database.
 * - The cron jobs take `tenantDatabase(env)` too: a sharded dispatcher
 *   (workers/cron/dispatch.ts) enqueues each job once per tenant database,
 *   naming it in the job's message.
 */

/** The D1 bindings of a worker: one today. */
export type DatabaseEnv = { DB: D1Database };

/** The control plane's database: the one database today. */
export const controlDatabase = (env: DatabaseEnv): D1Database => env.DB;

/**
 * The database of a tenant's rows: the one database today. A sharded
 * deployment reads the tenant's shard from the control plane's tenants row
 * and picks its binding (`DB_0` … `DB_{N-1}`). Call sites that do not know
 * the tenant yet (a worker's deps, built per isolate; a loan object before
 * its first command) pass none: with shards they take it from the
 * authenticated principal, the embed key's program, or the command.
 */
export const tenantDatabase = (env: DatabaseEnv, _tenantId?: string): D1Database => env.DB;
