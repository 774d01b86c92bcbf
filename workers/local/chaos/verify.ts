import type { StackResponse } from "../integration.ts";
import type { Merchant } from "./load.ts";
import { persist } from "./load.ts";
import type { Receiver } from "./receiver.ts";

/** Every item of a paginated `/v1` list (`data`, `nextCursor`). */
export async function listAll(get: (path: string) => Promise<StackResponse>, path: string): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const res = await persist(() => get(`${path}${sep}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`));
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    out.push(...res.body.data);
    cursor = res.body.nextCursor;
  } while (cursor);
  return out;
}

export type Expectation = {
  /** Loan ids by idempotency key, as the clients were answered. */
  loans: Map<string, string>;
  /** Loans repaid in full by their borrowers. */
  repaid: Set<string>;
  /** Endpoint path (of the receiver) that succeeds sooner or later, for every event. */
  deliveredTo: string[];
  /** Paths whose deliveries must end FAILED after exactly 3 attempts (410, 3xx). */
  failingTo?: string[];
};

export type Findings = {
  /** Loans the clients created and the service has not, or has more than once. */
  loansLost: number;
  loansDuplicated: number;
  /** Loans with more than one FUNDING settlement, or not ACTIVE/REPAID as they should be. */
  fundedTwice: number;
  notFunded: number;
  /** Repayments credited twice, or sent and never credited. */
  repaymentsDoubled: number;
  repaymentsDropped: number;
  /** Loan events that happen once in a loan's life (funded, repaid, overdue, defaulted) committed more than once. */
  loanEventsDoubled: number;
  /** Committed events never delivered (to an endpoint that accepts them), or delivered more than once. */
  eventsCommitted: number;
  eventsLost: number;
  eventsDoubled: number;
  /** Deliveries with more than 3 attempts; failing-endpoint deliveries that did not end FAILED at 3. */
  overAttempted: number;
  wronglyEnded: number;
  /** Event id → when it was first delivered (ms), for delays. */
  firstDelivery: Map<string, number>;
  events: { id: string; type: string; createdAt: string }[];
};

/**
 * What the service holds after a fault, checked through its API against what
 * the clients did: every loan once, funded once, every repayment credited
 * once, every committed event delivered, no delivery over 3 attempts.
 */
export async function verify(m: Merchant, receiver: Receiver, expect: Expectation): Promise<Findings> {
  const loans = await listAll(m.api, "/v1/loans");
  const byKey = new Map<string, any[]>();
  for (const l of loans) byKey.set(l.idempotencyKey, [...(byKey.get(l.idempotencyKey) ?? []), l]);
  let loansLost = 0;
  let loansDuplicated = 0;
  for (const key of expect.loans.keys()) {
    const found = byKey.get(key) ?? [];
    if (found.length === 0) loansLost++;
    if (found.length > 1) loansDuplicated++;
  }
  let fundedTwice = 0;
  let notFunded = 0;
  let repaymentsDoubled = 0;
  let repaymentsDropped = 0;
  for (const loan of loans) {
    const settlements = (await persist(() => m.api(`/v1/settlements/${loan.id}?limit=100`))).body.data as { kind: string; status: string }[];
    const funding = settlements.filter((s) => s.kind === "FUNDING");
    const repayments = settlements.filter((s) => s.kind === "REPAYMENT" || s.kind === "PARTIAL_REPAYMENT");
    if (funding.length > 1) fundedTwice++;
    if (funding.length === 0 || !["ACTIVE", "REPAID", "DEFAULTED"].includes(loan.status)) notFunded++;
    if (expect.repaid.has(loan.id)) {
      if (repayments.length > 1) repaymentsDoubled++;
      if (repayments.length === 0 || loan.status !== "REPAID") repaymentsDropped++;
    } else if (repayments.length > 0) repaymentsDoubled++;
  }

  const events = (await listAll(m.api, "/v1/events")) as { id: string; type: string; createdAt: string; data?: { loan?: { id?: string } } }[];
  const once = new Map<string, number>();
  for (const e of events) {
    if (!["loan.funded", "loan.repaid", "loan.overdue", "loan.defaulted"].includes(e.type)) continue;
    const key = `${e.data?.loan?.id}:${e.type}`;
    once.set(key, (once.get(key) ?? 0) + 1);
  }
  const loanEventsDoubled = [...once.values()].filter((n) => n > 1).length;
  const firstDelivery = new Map<string, number>();
  let eventsLost = 0;
  let eventsDoubled = 0;
  for (const path of expect.deliveredTo) {
    const delivered = receiver.delivered(path);
    const successes = new Map<string, number>();
    for (const a of receiver.arrivals(path)) if (a.answered === 200) successes.set(a.eventId, (successes.get(a.eventId) ?? 0) + 1);
    for (const e of events) {
      const at = delivered.get(e.id);
      if (at === undefined) eventsLost++;
      else firstDelivery.set(e.id, Math.min(at, firstDelivery.get(e.id) ?? at));
      if ((successes.get(e.id) ?? 0) > 1) eventsDoubled++;
    }
  }

  const deliveries = await listAll(m.dashboard, "/v1/webhooks/deliveries");
  const endpoints = (await persist(() => m.dashboard("/v1/webhooks"))).body.data as { id: string; url: string }[];
  const failingIds = new Set(endpoints.filter((e) => (expect.failingTo ?? []).some((p) => new URL(e.url).pathname === p)).map((e) => e.id));
  let overAttempted = 0;
  let wronglyEnded = 0;
  for (const d of deliveries) {
    if (d.attemptCount > 3 || d.attempts.length > 3) overAttempted++;
    if (failingIds.has(d.endpointId) && (d.status !== "FAILED" || d.attemptCount !== 3)) wronglyEnded++;
  }
  return {
    loansLost,
    loansDuplicated,
    fundedTwice,
    notFunded,
    repaymentsDoubled,
    repaymentsDropped,
    loanEventsDoubled,
    eventsCommitted: events.length,
    eventsLost,
    eventsDoubled,
    overAttempted,
    wronglyEnded,
    firstDelivery,
    events,
  };
}

/**
 * Waits until the service is quiet: every committed event has reached each of
 * `paths`, no delivery is still PENDING (so failing endpoints have had their
 * 3 attempts and their `webhook.delivery_failed` events went out), and that
 * held on two looks 2 s apart with no new event in between (an event
 * committed but not yet relayed has no delivery to be PENDING), or until
 * `timeoutMs` passes. True when it got quiet.
 */
export async function awaitDelivered(m: Merchant, receiver: Receiver, paths: string[], timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let quietWith = -1;
  while (Date.now() < deadline) {
    try {
      const events = await listAll(m.api, "/v1/events");
      const delivered = paths.every((path) => {
        const got = receiver.delivered(path);
        return events.every((e) => got.has(e.id));
      });
      const pending = delivered ? await m.dashboard("/v1/webhooks/deliveries?status=PENDING&limit=1") : undefined;
      if (events.length > 0 && pending?.status === 200 && pending.body.data.length === 0) {
        if (quietWith === events.length) return true;
        quietWith = events.length;
        await Bun.sleep(2_000);
        continue;
      }
    } catch {
      /* the stack is still coming back */
    }
    quietWith = -1;
    await Bun.sleep(500);
  }
  return false;
}
