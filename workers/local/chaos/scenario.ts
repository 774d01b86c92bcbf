import { createLoans, type Merchant, type PlannedLoan, persist, planLoans, repayLoan } from "./load.ts";

/** The load a fault runs under: loans created by concurrent clients, every `repayEvery`-th repaid by its borrower. */
export type Load = { loans: number; clients: number; repayEvery: number };

export type LoadResult = { ids: Map<string, string>; repaid: Set<string>; plan: PlannedLoan[] };

/**
 * Runs the load: each client creates loans (retrying with the same
 * idempotency key through faults and restarts) and repays its share in
 * full. Resolves when every loan is answered and every repayment submitted.
 */
export async function runLoad(m: Merchant, load: Load, deadline = Date.now() + 180_000): Promise<LoadResult> {
  const plan = planLoans(load.loans);
  const ids = new Map<string, string>();
  const repaid = new Set<string>();
  let next = 0;
  await Promise.all(
    Array.from({ length: load.clients }, async () => {
      while (next < plan.length) {
        const i = next++;
        const p = plan[i]!;
        const one = await createLoans(m, [p], 1, deadline);
        const id = one.get(p.idempotencyKey)!;
        ids.set(p.idempotencyKey, id);
        if (load.repayEvery > 0 && i % load.repayEvery === 0) {
          await repayLoan(m, id, p.borrower, deadline);
          repaid.add(id);
        }
      }
    }),
  );
  return { ids, repaid, plan };
}

/** Moves the tenant's sandbox clock past every loan's due date (7-day loans, 3 days of grace): the sweep marks the unpaid ones overdue (`loan.overdue`). */
export async function advancePastDue(m: Merchant, days = 8) {
  const res = await persist(() => m.api("/v1/sandbox/clock/advance", { json: { seconds: days * 86_400 } }));
  if (res.status !== 200) throw new Error(`clock advance: ${res.status} ${JSON.stringify(res.body)}`);
}

/** Waits until every loan that is not repaid is marked `overdue` by the sweep (under the fault), or `timeoutMs`; returns how many are not. */
export async function awaitSwept(m: Merchant, ids: Iterable<string>, repaid: Set<string>, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  const pending = new Set([...ids].filter((id) => !repaid.has(id)));
  while (pending.size > 0 && Date.now() < deadline) {
    for (const id of [...pending]) {
      const res = await persist(() => m.api(`/v1/loans/${id}`));
      if (res.body.overdue === true || res.body.status === "DEFAULTED") pending.delete(id);
    }
    if (pending.size > 0) await Bun.sleep(500);
  }
  return pending.size;
}
