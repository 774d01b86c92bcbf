import { and, desc, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { insertIf } from "../../db/guarded-writes.ts";
import { commercialTerms, KYB_INSERTION_ORDER, kybSubmissions, operatorAudit } from "../../db/schema/go-live.ts";
import { tenants } from "../../db/schema/tenants.ts";
import { newestFirst, pageOf } from "../../db/pagination.ts";
import { conflict, notFound } from "../domain/errors.ts";
import { newId } from "../domain/ids.ts";

/** Who the audit names for an action taken with the platform operator key. */
export const OPERATOR_ACTOR = "operator";

const latestKyb = (db: Db, tenantId: string) =>
  db.select().from(kybSubmissions).where(eq(kybSubmissions.tenantId, tenantId)).orderBy(desc(kybSubmissions.submittedAt), desc(KYB_INSERTION_ORDER)).limit(1);

async function requireTenant(db: Db, tenantId: string) {
  const [row] = await db.select({ id: tenants.id }).from(tenants).where(eq(tenants.id, tenantId)).limit(1);
  if (!row) throw notFound("Tenant");
}

/** Every tenant, newest first, with its latest KYB status and certification (the operator's queue). */
export async function listOperatorTenants(deps: { db: Db }, input: { limit: number; cursor?: string }) {
  const { where, orderBy } = newestFirst({ createdAt: tenants.createdAt, id: tenants.id }, input.cursor);
  const rows = await deps.db
    .select()
    .from(tenants)
    .where(where)
    .orderBy(...orderBy)
    .limit(input.limit + 1);
  const page = pageOf(rows, input.limit);
  const data = await Promise.all(
    page.data.map(async (t) => {
      const [kyb] = await latestKyb(deps.db, t.id);
      return { tenant: t, kyb: kyb ?? null, kybMatches: kyb ? await kybMatches(deps.db, kyb) : [] };
    }),
  );
  return { data, nextCursor: page.nextCursor };
}

export type KybMatch = { tenantId: string; kybId: string; status: (typeof kybSubmissions.$inferSelect)["status"]; matched: string[] };

/**
 * Other tenants' KYB submissions that share this one's registration number (in the same country) or a document
 * (by its sha256): evidence a tenant may have copied from another's. Each
 * call reads the submissions table (no index serves the document match): an
 * operator's page of 20 tenants, fine at today's numbers; a table of
 * document hashes would index it. The operator sees them beside the submission,
 * so that checking the hashes alone does not approve a copy.
 */
export async function kybMatches(db: Db, kyb: typeof kybSubmissions.$inferSelect): Promise<KybMatch[]> {
  const hashes = JSON.stringify(kyb.documents.map((d) => d.sha256));
  // Compared without case or spaces: "HRB 123456" and "hrb123456" name one registration.
  const sameNumber = kyb.registrationNumber.replace(/ /g, "").toLowerCase();
  const rows = await db
    .select({
      tenantId: kybSubmissions.tenantId,
      kybId: kybSubmissions.id,
      status: kybSubmissions.status,
      sameRegistration: sql<number>`(${kybSubmissions.country} = ${kyb.country} AND lower(replace(${kybSubmissions.registrationNumber}, ' ', '')) = ${sameNumber})`,
      sameDocuments: sql<
        string | null
      >`(SELECT json_group_array(DISTINCT json_extract(d.value, '$.sha256')) FROM json_each(${kybSubmissions.documents}) AS d WHERE json_extract(d.value, '$.sha256') IN (SELECT value FROM json_each(${hashes})))`,
    })
    .from(kybSubmissions)
    .where(
      and(
        sql`${kybSubmissions.tenantId} <> ${kyb.tenantId}`,
        sql`((${kybSubmissions.country} = ${kyb.country} AND lower(replace(${kybSubmissions.registrationNumber}, ' ', '')) = ${sameNumber})
          OR EXISTS (SELECT 1 FROM json_each(${kybSubmissions.documents}) AS d WHERE json_extract(d.value, '$.sha256') IN (SELECT value FROM json_each(${hashes}))))`,
      ),
    )
    .orderBy(desc(kybSubmissions.submittedAt))
    .limit(20);
  return rows.map((r) => ({
    tenantId: r.tenantId,
    kybId: r.kybId,
    status: r.status,
    matched: [
      ...(Number(r.sameRegistration) ? ["registrationNumber"] : []),
      ...(JSON.parse(r.sameDocuments ?? "[]") as string[]).filter(Boolean).map((h) => `document:${h}`),
    ],
  }));
}

/**
 * The operator's KYB decision on the tenant's newest submission, which must
 * be SUBMITTED (409 otherwise). The audit row and the status change are one
 * batch, each guarded by the same condition, so a decision is never recorded
 * without its audit, nor twice.
 */
export async function decideKyb(
  deps: { db: Db },
  input: { tenantId: string; decision: "APPROVED" | "REJECTED"; note: string | null; actor: string; now: Date; kybId?: string },
) {
  const { db } = deps;
  await requireTenant(db, input.tenantId);
  const [kyb] = await latestKyb(db, input.tenantId);
  if (!kyb || kyb.status !== "SUBMITTED") throw conflict(kyb ? `The tenant's KYB is ${kyb.status}, not SUBMITTED` : "The tenant has not submitted KYB");
  if (input.kybId && kyb.id !== input.kybId) {
    throw conflict(`KYB submission ${input.kybId} is not the tenant's newest (${kyb.id}): it was resubmitted since; review the newest one`);
  }
  const audit = {
    id: newId(),
    tenantId: input.tenantId,
    actor: input.actor,
    action: "KYB_DECIDED" as const,
    decision: input.decision,
    note: input.note,
    createdAt: input.now,
  };
  // Still SUBMITTED and still the newest: a resubmission racing this decision supersedes the row decided on.
  const newest = sql`NOT EXISTS (SELECT 1 FROM kyb_submissions AS newer WHERE newer.tenant_id = ${input.tenantId}
    AND newer.rowid > (SELECT rowid FROM kyb_submissions WHERE id = ${kyb.id}))`;
  const stillSubmitted = sql`EXISTS (SELECT 1 FROM kyb_submissions WHERE id = ${kyb.id} AND status = 'SUBMITTED') AND ${newest}`;
  const [, updated] = await db.batch([
    insertIf(db, operatorAudit, audit, stillSubmitted),
    db
      .update(kybSubmissions)
      .set({ status: input.decision, decidedAt: input.now, decisionNote: input.note })
      .where(and(eq(kybSubmissions.id, kyb.id), eq(kybSubmissions.status, "SUBMITTED"), newest))
      .returning({ id: kybSubmissions.id }),
  ]);
  if (updated.length === 0) throw conflict("The tenant's KYB was decided meanwhile, or resubmitted: review the newest one");
  return { kybId: kyb.id, status: input.decision, decidedAt: input.now, audit };
}

/** Records commercial terms agreed with the tenant, with its audit row, in one batch. */
export async function recordCommercialTerms(deps: { db: Db }, input: { tenantId: string; reference: string; note: string | null; actor: string; now: Date }) {
  const { db } = deps;
  await requireTenant(db, input.tenantId);
  const terms = { id: newId(), tenantId: input.tenantId, reference: input.reference, note: input.note, recordedAt: input.now };
  const audit = {
    id: newId(),
    tenantId: input.tenantId,
    actor: input.actor,
    action: "COMMERCIAL_TERMS_RECORDED" as const,
    decision: input.reference,
    note: input.note,
    createdAt: input.now,
  };
  await db.batch([db.insert(commercialTerms).values(terms), db.insert(operatorAudit).values(audit)]);
  return { terms, audit };
}
