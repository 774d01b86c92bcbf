/** Round trips per probe request, so that the request itself weighs little on the time per round trip. */
export const PROBE_ROUND_TRIPS = 20;

/** The yardsticks, by path: a one-row read by primary key and a one-row write, each PROBE_ROUND_TRIPS times in a row. */
export const PROBES: Record<string, string> = {
  "/probe/read": "SELECT last_block FROM sandbox_ledgers WHERE tenant_id = (SELECT tenant_id FROM sandbox_ledgers LIMIT 1) AND chain = 'POLYGON_AMOY'",
  "/probe/write":
    "UPDATE sandbox_ledgers SET updated_at = updated_at WHERE tenant_id = (SELECT tenant_id FROM sandbox_ledgers LIMIT 1) AND chain = 'POLYGON_AMOY'",
};
