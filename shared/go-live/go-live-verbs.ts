import { and, asc, desc, eq, isNull, sql } from "drizzle-orm";
import { insertIf } from "../../db/guarded-writes.ts";
import { AUDIT_INSERTION_ORDER, KYB_INSERTION_ORDER, type KybDocument, kybSubmissions, operatorAudit } from "../../db/schema/go-live.ts";
import { tenants } from "../../db/schema/tenants.ts";
import { conflict } from "../domain/errors.ts";
import { evaluateGoLive, notCertifiableMessage } from "../domain/go-live.ts";
import { newId } from "../domain/ids.ts";
import { loadTenant } from "../tenants/tenant-context.ts";
import { type GoLiveFactsDeps, loadGoLiveFacts } from "./go-live-facts.ts";

/** The tenant's certification: mode, certifiedAt, the 10 steps in order, and the operator's audit (oldest first). */
export async function goLiveStatus(deps: GoLiveFactsDeps, input: { tenantId: string }) {
  const [tenant, facts, audit] = await Promise.all([
    loadTenant(deps.db, input.tenantId),
    loadGoLiveFacts(deps, input),
    deps.db.select().from(operatorAudit).where(eq(operatorAudit.tenantId, input.tenantId)).orderBy(asc(operatorAudit.createdAt), asc(AUDIT_INSERTION_ORDER)),
  ]);
  return { mode: tenant.mode, certifiedAt: tenant.certifiedAt, ...evaluateGoLive(facts), audit };
}

export type KybInput = { legalName: string; registrationNumber: string; country: string; documents: KybDocument[] };

/**
 * Records a KYB submission for the operator to decide. A tenant whose KYB is
 * approved cannot submit again (409): the approval is what certification
 * rests on. Otherwise the new submission supersedes any earlier one (a
 * correction while SUBMITTED, or a new try after REJECTED).
 */
export async function submitKyb(deps: Pick<GoLiveFactsDeps, "db">, input: { tenantId: string; submittedBy: string; kyb: KybInput; now: Date }) {
  const { db } = deps;
  const [latest] = await db
    .select({ status: kybSubmissions.status })
    .from(kybSubmissions)
    .where(eq(kybSubmissions.tenantId, input.tenantId))
    .orderBy(desc(kybSubmissions.submittedAt), desc(KYB_INSERTION_ORDER))
    .limit(1);
  if (latest?.status === "APPROVED") throw conflict("Your business verification is already approved");
  const row = {
    id: newId(),
    tenantId: input.tenantId,
    legalName: input.kyb.legalName,
    registrationNumber: input.kyb.registrationNumber,
    country: input.kyb.country.toUpperCase(),
    documents: input.kyb.documents.map((d) => ({ kind: d.kind, fileName: d.fileName, sha256: d.sha256.toLowerCase() })),
    status: "SUBMITTED" as const,
    submittedBy: input.submittedBy,
    submittedAt: input.now,
    decidedAt: null,
    decisionNote: null,
  };
  // Inserted only while no submission is APPROVED: an operator's approval racing this submission either lands first
  // (this one is refused) or finds a newer submission and is refused itself (operator-verbs.ts), never both.
  const inserted = await insertIf(
    db,
    kybSubmissions,
    row,
    sql`NOT EXISTS (SELECT 1 FROM kyb_submissions WHERE tenant_id = ${input.tenantId} AND status = 'APPROVED')`,
  ).returning({ id: kybSubmissions.id });
  if (inserted.length === 0) throw conflict("Your business verification is already approved");
  return row;
}

/**
 * The steps a tenant undoes in the database, asserted again in the certifying write itself: a webhook endpoint
 * deleted, the last key revoked, the product deactivated or the DISBURSEMENT wallet step 5 counted deleted between the
 * check and the write left the tenant certified with a step no longer DONE (an audit certified 5 of 5 times while
 * deleting the only wallet). (The KYB cannot be undone once APPROVED; the wallet's balance is the chain's.)
 */
const stillCertifiable = (
  tenantId: string,
  walletId: string | undefined,
) => sql`EXISTS (SELECT 1 FROM webhook_endpoints WHERE tenant_id = ${tenantId} AND deleted_at IS NULL)
  AND EXISTS (SELECT 1 FROM api_keys WHERE tenant_id = ${tenantId} AND revoked_at IS NULL)
  AND EXISTS (SELECT 1 FROM loan_products WHERE tenant_id = ${tenantId} AND status = 'ACTIVE')
  AND EXISTS (SELECT 1 FROM wallets WHERE tenant_id = ${tenantId} AND role = 'DISBURSEMENT' AND verified_at IS NOT NULL AND deleted_at IS NULL
    AND (${walletId ?? null} IS NULL OR id = ${walletId ?? null}))`;

/**
 * Certifies the tenant for live when all 10 steps are DONE: writes
 * `certifiedAt` and the live mode once (the update only matches an
 * uncertified tenant, so two concurrent calls keep one certifiedAt).
 * Certifying again answers the first certifiedAt. Otherwise 409 naming the
 * first incomplete step.
 */
export async function certifyTenant(deps: GoLiveFactsDeps, input: { tenantId: string; now: Date }) {
  const tenant = await loadTenant(deps.db, input.tenantId);
  if (tenant.certifiedAt) return { mode: "live" as const, certifiedAt: tenant.certifiedAt };
  const facts = await loadGoLiveFacts(deps, input);
  const evaluation = evaluateGoLive(facts);
  if (evaluation.nextStep !== null) throw conflict(notCertifiableMessage(evaluation));
  const [certified] = await deps.db
    .update(tenants)
    // The sandbox clock's offset stays: only sandbox loans run on it, live loans on the system clock.
    .set({ mode: "live", certifiedAt: input.now })
    .where(and(eq(tenants.id, input.tenantId), isNull(tenants.certifiedAt), stillCertifiable(input.tenantId, facts.liquidity?.walletId)))
    .returning({ certifiedAt: tenants.certifiedAt });
  const after = await loadTenant(deps.db, input.tenantId);
  // Another call certified it meanwhile (its certifiedAt stands), or a step was undone between the check and the write.
  if (!certified && !after.certifiedAt) throw conflict(notCertifiableMessage(evaluateGoLive(await loadGoLiveFacts(deps, input))));
  return { mode: "live" as const, certifiedAt: after.certifiedAt! };
}
