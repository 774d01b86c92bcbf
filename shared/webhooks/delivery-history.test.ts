import { afterAll, beforeAll, describe, test } from "bun:test";
import { events } from "../../db/schema/events.ts";
import { tenants } from "../../db/schema/tenants.ts";
import { webhookDeliveries, webhookEndpoints } from "../../db/schema/webhooks.ts";
import type { TenantMode } from "../domain/rails.ts";
import type { EventType } from "../events/loan-events.ts";
import { createTestApp, type TestApp } from "../testing/harness.ts";
import { expectListsMatchDefinition } from "../testing/list-definition.ts";
import { pageThrough } from "../testing/page-through.ts";
import { type DeliveryStatus, type ListDeliveriesInput, listDeliveries } from "./delivery-history.ts";

/**
 * `listDeliveries` against its definition, whatever range each filter's
 * query reads (history-plans.test.ts) and however a list of both modes is
 * merged: deliveries of two tenants, to three endpoints of two modes, of
 * two event types and three statuses, of two loans' events and of none,
 * with ties on `createdAt` across modes; every filter combination is paged
 * through to the end (3 a page) and must give exactly its deliveries,
 * newest first, each once, never another tenant's.
 */
let t: TestApp;
const TENANT = "00000000-0000-4000-8000-00000000d001";
const OTHER = "00000000-0000-4000-8000-00000000d002";
const ENDPOINTS = [
  { id: "ep-sandbox-1", mode: "sandbox" as TenantMode },
  { id: "ep-sandbox-2", mode: "sandbox" as TenantMode },
  { id: "ep-live", mode: "live" as TenantMode },
];
const TYPES: EventType[] = ["loan.funded", "loan.repaid"];
const STATUSES: DeliveryStatus[] = ["PENDING", "SUCCEEDED", "FAILED"];
const LOANS = ["loan-a", "loan-b", null];

type Row = {
  id: string;
  tenantId: string;
  endpointId: string;
  mode: TenantMode;
  status: DeliveryStatus;
  eventType: EventType;
  loanId: string | null;
  createdAt: Date;
};
const rows: Row[] = [];

beforeAll(async () => {
  t = await createTestApp();
  const at = new Date("2026-01-01T00:00:00Z").getTime();
  await t.db.insert(tenants).values([TENANT, OTHER].map((id) => ({ id, name: id, createdAt: new Date(at) })));
  await t.db.insert(webhookEndpoints).values(
    [TENANT, OTHER].flatMap((tenantId) =>
      ENDPOINTS.map((e) => ({
        id: tenantId === TENANT ? e.id : `${e.id}-other`,
        tenantId,
        url: `https://example.com/${e.id}`,
        events: ["*"],
        mode: e.mode,
        secretCiphertext: "x",
        secretPrefix: "whsec",
        createdAt: new Date(at),
      })),
    ),
  );
  for (let i = 0; i < 90; i++) {
    const tenantId = i % 9 === 8 ? OTHER : TENANT;
    const endpoint = ENDPOINTS[i % 3]!;
    const row: Row = {
      id: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
      tenantId,
      endpointId: tenantId === TENANT ? endpoint.id : `${endpoint.id}-other`,
      mode: endpoint.mode,
      status: STATUSES[Math.floor(i / 3) % 3]!,
      eventType: TYPES[Math.floor(i / 2) % 2]!,
      loanId: LOANS[Math.floor(i / 5) % 3]!,
      // Three at a time share a timestamp, across endpoints and so across modes: the id breaks the tie.
      createdAt: new Date(at + Math.floor(i / 3) * 1000),
    };
    rows.push(row);
    await t.db.insert(events).values({
      id: `event-${i}`,
      seq: i + 1,
      tenantId,
      type: row.eventType,
      mode: row.mode,
      loanId: row.loanId,
      envelope: { id: `event-${i}`, type: row.eventType } as never,
      createdAt: row.createdAt,
    });
    await t.db.insert(webhookDeliveries).values({
      id: row.id,
      tenantId,
      eventId: `event-${i}`,
      eventType: row.eventType,
      endpointId: row.endpointId,
      redeliveryOf: null,
      mode: row.mode,
      status: row.status,
      attemptCount: 1,
      nextAttemptAt: null,
      createdAt: row.createdAt,
      updatedAt: row.createdAt,
    });
  }
});
afterAll(() => t.close());

type Filters = Omit<ListDeliveriesInput, "tenantId" | "limit" | "cursor">;

const matches = (r: Row, f: Filters) =>
  r.tenantId === TENANT &&
  (f.mode === undefined || r.mode === f.mode) &&
  (f.endpointId === undefined || r.endpointId === f.endpointId) &&
  (f.status === undefined || r.status === f.status) &&
  (f.eventType === undefined || r.eventType === f.eventType) &&
  (f.loanId === undefined || r.loanId === f.loanId);

async function listed(filters: Filters): Promise<string[]> {
  return (await pageThrough((cursor) => listDeliveries({ db: t.db }, { tenantId: TENANT, ...filters, limit: 3, cursor }))).map((d) => d.id);
}

const combos: Filters[] = [];
for (const mode of [undefined, "sandbox", "live"] as const) {
  for (const status of [undefined, ...STATUSES]) {
    combos.push({ mode, status });
    combos.push({ mode, status, eventType: "loan.repaid" });
    combos.push({ mode, status, endpointId: "ep-sandbox-2" });
    combos.push({ mode, status, loanId: "loan-a" });
  }
  combos.push({ mode, endpointId: "ep-live-other" });
}

describe("GET /v1/webhooks/deliveries filters, against their definition", () => {
  test(`${combos.length} filter combinations, each paged to the end, give exactly their deliveries, newest first, never another tenant's`, async () => {
    await expectListsMatchDefinition({ combos, rows: rows, matches, listed });
  });
});
