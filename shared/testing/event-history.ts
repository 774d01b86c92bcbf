import type { Client } from "@libsql/client";

export type HistoryInput = {
  /** Ids are `<prefix><n>`; deliveries, attempts and notifications add `d-`, `a-`, `n-`. */
  prefix: string;
  /** The first event's `seq`; the others follow. */
  firstSeq: number;
  count: number;
  /** Events alternate between these tenants. */
  tenantIds: string[];
  /** Every event's `created_at`, and its `relayed_at` unless null (an unrelayed event). */
  at: number;
  relayed: boolean;
  /** With an endpoint: one delivery per event to it, in this status, with one attempt (unless `attempts` is false). */
  endpointId?: string;
  attempts?: boolean;
  deliveryStatus?: "PENDING" | "SUCCEEDED" | "FAILED";
  /** A notification per event, its e-mail in this status; none when omitted. */
  emailStatus?: "PENDING" | "SENT" | "FAILED" | "SKIPPED";
  loanId?: string;
};

/**
 * Writes `count` events (and their deliveries, attempts and notifications) in
 * one INSERT … SELECT per table over a recursive counter, so a history of
 * 100,000 events takes a second, not 100,000 statements.
 */
export async function insertEventHistory(client: Client, h: HistoryInput): Promise<void> {
  const counter = "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)";
  const tenant = `json_extract(?, '$[' || (i % ${h.tenantIds.length}) || ']')`;
  const tenants = JSON.stringify(h.tenantIds);
  const statements = [
    {
      sql: `${counter} INSERT INTO events (id, seq, tenant_id, type, mode, loan_id, envelope, created_at, relayed_at)
            SELECT id, seq, tenant, 'loan.funded', 'sandbox', ?,
              json_object('id', id, 'type', 'loan.funded', 'tenantId', tenant, 'mode', 'sandbox', 'data', json('{}'), 'program', NULL, 'channel', NULL), ?, ?
            FROM (SELECT ? || i AS id, ? + i AS seq, ${tenant} AS tenant FROM n)`,
      args: [h.count, h.loanId ?? null, h.at, h.relayed ? h.at : null, h.prefix, h.firstSeq, tenants],
    },
  ];
  if (h.endpointId) {
    statements.push({
      sql: `${counter} INSERT INTO webhook_deliveries (id, tenant_id, event_id, event_type, endpoint_id, status, attempt_count, next_attempt_at, created_at, updated_at)
              SELECT 'd-' || ? || i, ${tenant}, ? || i, 'loan.funded', ?, ?, 1, ?, ?, ? FROM n`,
      args: [h.count, h.prefix, tenants, h.prefix, h.endpointId, h.deliveryStatus ?? "SUCCEEDED", h.deliveryStatus === "PENDING" ? h.at : null, h.at, h.at],
    });
  }
  if (h.endpointId && h.attempts !== false) {
    statements.push({
      sql: `${counter} INSERT INTO webhook_attempts (id, tenant_id, delivery_id, attempt, started_at, finished_at, duration_ms, response_status, succeeded)
              SELECT 'a-' || ? || i, ${tenant}, 'd-' || ? || i, 1, ?, ?, 5, 200, 1 FROM n`,
      args: [h.count, h.prefix, tenants, h.prefix, h.at, h.at],
    });
  }
  if (h.emailStatus) {
    statements.push({
      sql: `${counter} INSERT INTO notifications (id, tenant_id, event_id, event_type, mode, title, body, email_to, email_status, email_attempts, email_next_attempt_at, event_seq, created_at)
            SELECT 'n-' || ? || i, ${tenant}, ? || i, 'loan.funded', 'sandbox', 't', 'b', 'owner@example.com', ?, 1, ?, ? + i, ? FROM n`,
      args: [h.count, h.prefix, tenants, h.prefix, h.emailStatus, h.emailStatus === "PENDING" ? h.at : null, h.firstSeq, h.at],
    });
  }
  await client.batch(statements, "write");
}

/** Bare tenants (`tenantIds`), the first with one live sandbox endpoint subscribed to every event: what the outbox tests relay to. */
export async function insertTenantsWithEndpoint(client: Client, input: { tenantIds: string[]; endpointId: string }): Promise<void> {
  const [first] = input.tenantIds;
  await client.batch(
    [
      ...input.tenantIds.map((id, i) => ({ sql: "INSERT INTO tenants (id, name, created_at) VALUES (?, ?, 0)", args: [id, `tenant ${i}`] })),
      {
        sql: "INSERT INTO webhook_endpoints (id, tenant_id, url, events, mode, secret_ciphertext, secret_prefix, created_at) VALUES (?, ?, 'https://example.com/hook', '[\"*\"]', 'sandbox', 'x', 'whsec', 0)",
        args: [input.endpointId, first!],
      },
    ],
    "write",
  );
}
