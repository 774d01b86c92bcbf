import { describe, expect, test } from "bun:test";
import {
  EVENT_TYPES,
  isDeclined,
  isOpen,
  LOAN_EVENT_TYPES,
  LOAN_STATUSES,
  TRIGGER_WORDS,
  transition,
  type LoanEventType,
  type LoanState,
  type LoanTrigger,
} from "./loan-state-machine.ts";
import { DECISION_OUTCOMES, type DecisionOutcome } from "./underwriting.ts";

const OUTCOMES: (DecisionOutcome | null)[] = [null, ...DECISION_OUTCOMES];
const TRIGGERS: LoanTrigger[] = [
  ...DECISION_OUTCOMES.map((outcome): LoanTrigger => ({ kind: "DECIDE", outcome })),
  { kind: "REVIEW_APPROVE" },
  { kind: "REVIEW_REJECT" },
  { kind: "FUNDING_CONFIRMED" },
  { kind: "FUNDING_FAILED" },
  { kind: "MARK_OVERDUE" },
  { kind: "GRACE_ELAPSED" },
  { kind: "REPAYMENT_CONFIRMED" },
  { kind: "PARTIAL_REPAYMENT" },
  { kind: "REPAYMENT_FAILED" },
  { kind: "REPAYMENT_REVERSED", back: "ACTIVE" },
  { kind: "REPAYMENT_REVERSED", back: "DEFAULTED" },
];
const ALL_STATES: LoanState[] = LOAN_STATUSES.flatMap((status) =>
  OUTCOMES.flatMap((outcome) => [false, true].map((overdue) => ({ status, outcome, overdue }))),
);

/**
 * The expectation, written from SPEC.md's table and DECISIONS.md as rows
 * rather than code paths: (from status, trigger, guard) → (change, events).
 * Whatever no row matches must be refused.
 */
type Row = {
  from: LoanState["status"];
  on: LoanTrigger["kind"];
  when?: (s: LoanState, t: LoanTrigger) => boolean;
  change: (s: LoanState, t: LoanTrigger) => Partial<LoanState>;
  events: LoanEventType[];
};
const ROWS: Row[] = [
  {
    from: "CREATED",
    on: "DECIDE",
    when: (s) => s.outcome === null,
    change: (_, t) => ({ outcome: t.kind === "DECIDE" ? t.outcome : null }),
    events: ["loan.decision"],
  },
  { from: "CREATED", on: "REVIEW_APPROVE", when: (s) => s.outcome === "MANUAL_REVIEW", change: () => ({ outcome: "APPROVED" }), events: ["loan.approved"] },
  { from: "CREATED", on: "REVIEW_REJECT", when: (s) => s.outcome === "MANUAL_REVIEW", change: () => ({ outcome: "DECLINED" }), events: ["loan.rejected"] },
  { from: "CREATED", on: "FUNDING_CONFIRMED", when: (s) => s.outcome === "APPROVED", change: () => ({ status: "ACTIVE" }), events: ["loan.funded"] },
  { from: "CREATED", on: "FUNDING_FAILED", when: (s) => s.outcome === "APPROVED", change: () => ({}), events: ["loan.funding_failed"] },
  { from: "ACTIVE", on: "MARK_OVERDUE", when: (s) => !s.overdue, change: () => ({ overdue: true }), events: ["loan.overdue"] },
  { from: "ACTIVE", on: "GRACE_ELAPSED", when: (s) => s.overdue, change: () => ({ status: "DEFAULTED" }), events: ["loan.defaulted"] },
  {
    from: "ACTIVE",
    on: "GRACE_ELAPSED",
    when: (s) => !s.overdue,
    change: () => ({ status: "DEFAULTED", overdue: true }),
    events: ["loan.overdue", "loan.defaulted"],
  },
  { from: "ACTIVE", on: "REPAYMENT_CONFIRMED", change: () => ({ status: "REPAID" }), events: ["loan.repaid"] },
  { from: "ACTIVE", on: "PARTIAL_REPAYMENT", change: () => ({}), events: [] },
  { from: "ACTIVE", on: "REPAYMENT_FAILED", change: () => ({}), events: ["loan.repayment_failed"] },
  { from: "DEFAULTED", on: "REPAYMENT_CONFIRMED", change: () => ({ status: "REPAID" }), events: ["loan.repaid"] },
  { from: "DEFAULTED", on: "PARTIAL_REPAYMENT", change: () => ({}), events: [] },
  { from: "DEFAULTED", on: "REPAYMENT_FAILED", change: () => ({}), events: ["loan.repayment_failed"] },
  // A reorg takes a credited repayment back: a partial one leaves the status, a full one restores what it was.
  { from: "ACTIVE", on: "REPAYMENT_REVERSED", change: () => ({}), events: ["loan.repayment_reversed"] },
  { from: "DEFAULTED", on: "REPAYMENT_REVERSED", change: () => ({}), events: ["loan.repayment_reversed"] },
  {
    from: "REPAID",
    on: "REPAYMENT_REVERSED",
    when: (s) => s.overdue,
    change: (_, t) => ({ status: t.kind === "REPAYMENT_REVERSED" ? t.back : "REPAID" }),
    events: ["loan.repayment_reversed"],
  },
  {
    from: "REPAID",
    on: "REPAYMENT_REVERSED",
    // Never overdue: it can only have been ACTIVE before.
    when: (s, t) => !s.overdue && t.kind === "REPAYMENT_REVERSED" && t.back === "ACTIVE",
    change: () => ({ status: "ACTIVE" }),
    events: ["loan.repayment_reversed"],
  },
];

const label = (s: LoanState, t: LoanTrigger) =>
  `${s.status}/${s.outcome ?? "null"}/${s.overdue ? "overdue" : "current"} + ${t.kind}${t.kind === "DECIDE" ? `(${t.outcome})` : ""}`;

describe("transition: every status × outcome × overdue × trigger", () => {
  test(`covers ${ALL_STATES.length} states × ${TRIGGERS.length} triggers`, () => {
    expect(ALL_STATES.length).toBe(4 * 4 * 2);
    expect(TRIGGERS.length).toBe(14);
  });

  for (const state of ALL_STATES) {
    for (const trigger of TRIGGERS) {
      test(label(state, trigger), () => {
        const rows = ROWS.filter((r) => r.from === state.status && r.on === trigger.kind && (r.when?.(state, trigger) ?? true));
        expect(rows.length).toBeLessThanOrEqual(1); // the table itself is deterministic
        const result = transition(state, trigger);
        const row = rows[0];
        if (row) {
          expect(result).toEqual({ ok: true, next: { ...state, ...row.change(state, trigger) }, events: row.events });
        } else {
          expect(result.ok).toBe(false);
          if (!result.ok) {
            expect(result.reason).toContain(state.status);
            expect(result.reason).toContain(TRIGGER_WORDS[trigger.kind]);
            expect(result.reason).not.toContain(trigger.kind);
          }
        }
      });
    }
  }
});

describe("transition: lifecycles", () => {
  const start: LoanState = { status: "CREATED", outcome: null, overdue: false };
  /** Applies triggers in order, failing the test on a refusal; returns the end state and every event fired. */
  const run = (triggers: LoanTrigger[], from = start) => {
    let state = from;
    const events: LoanEventType[] = [];
    for (const t of triggers) {
      const r = transition(state, t);
      if (!r.ok) throw new Error(r.reason);
      state = r.next;
      events.push(...r.events);
    }
    return { state, events };
  };

  test("happy path: decided, funded, repaid", () => {
    expect(run([{ kind: "DECIDE", outcome: "APPROVED" }, { kind: "FUNDING_CONFIRMED" }, { kind: "REPAYMENT_CONFIRMED" }])).toEqual({
      state: { status: "REPAID", outcome: "APPROVED", overdue: false },
      events: ["loan.decision", "loan.funded", "loan.repaid"],
    });
  });

  test("declined: stays CREATED, shows as DECLINED, can never be funded", () => {
    const { state } = run([{ kind: "DECIDE", outcome: "DECLINED" }]);
    expect(state).toEqual({ status: "CREATED", outcome: "DECLINED", overdue: false });
    expect(isDeclined(state)).toBe(true);
    expect(isOpen(state)).toBe(false);
    for (const t of TRIGGERS) expect(transition(state, t).ok).toBe(false);
  });

  test("manual review approved, then funded after a failed attempt", () => {
    expect(run([{ kind: "DECIDE", outcome: "MANUAL_REVIEW" }, { kind: "REVIEW_APPROVE" }, { kind: "FUNDING_FAILED" }, { kind: "FUNDING_CONFIRMED" }])).toEqual({
      state: { status: "ACTIVE", outcome: "APPROVED", overdue: false },
      events: ["loan.decision", "loan.approved", "loan.funding_failed", "loan.funded"],
    });
  });

  test("manual review rejected: declined, and a second review is refused", () => {
    const { state, events } = run([{ kind: "DECIDE", outcome: "MANUAL_REVIEW" }, { kind: "REVIEW_REJECT" }]);
    expect(events).toEqual(["loan.decision", "loan.rejected"]);
    expect(isDeclined(state)).toBe(true);
    const again = transition(state, { kind: "REVIEW_APPROVE" });
    expect(again.ok).toBe(false);
    if (!again.ok)
      expect(again.reason).toBe(
        "Approving it in review is not allowed on a loan that is CREATED (outcome DECLINED): only a loan awaiting manual review can be reviewed",
      );
  });

  test("overdue, then defaulted, then recovered by a late repayment", () => {
    expect(
      run([
        { kind: "DECIDE", outcome: "APPROVED" },
        { kind: "FUNDING_CONFIRMED" },
        { kind: "MARK_OVERDUE" },
        { kind: "PARTIAL_REPAYMENT" },
        { kind: "GRACE_ELAPSED" },
        { kind: "REPAYMENT_FAILED" },
        { kind: "PARTIAL_REPAYMENT" },
        { kind: "REPAYMENT_CONFIRMED" },
      ]),
    ).toEqual({
      state: { status: "REPAID", outcome: "APPROVED", overdue: true },
      events: ["loan.decision", "loan.funded", "loan.overdue", "loan.defaulted", "loan.repayment_failed", "loan.repaid"],
    });
  });

  test("a sweep that first sees the loan past grace fires overdue then defaulted", () => {
    const active: LoanState = { status: "ACTIVE", outcome: "APPROVED", overdue: false };
    expect(run([{ kind: "GRACE_ELAPSED" }], active).events).toEqual(["loan.overdue", "loan.defaulted"]);
  });

  test("overdue fires once", () => {
    const { state } = run([{ kind: "DECIDE", outcome: "APPROVED" }, { kind: "FUNDING_CONFIRMED" }, { kind: "MARK_OVERDUE" }]);
    expect(transition(state, { kind: "MARK_OVERDUE" })).toEqual({
      ok: false,
      reason: "Marking it overdue is not allowed on a loan that is ACTIVE (overdue): loan.overdue has already fired",
    });
  });

  test("REPAID is final: every trigger but a reorg's reversal is refused from every REPAID state", () => {
    for (const state of ALL_STATES.filter((s) => s.status === "REPAID")) {
      for (const t of TRIGGERS.filter((t) => t.kind !== "REPAYMENT_REVERSED")) {
        expect(transition(state, t)).toEqual({ ok: false, reason: `${TRIGGER_WORDS[t.kind]} is not allowed on a loan that is REPAID: REPAID is final` });
      }
    }
  });

  test("the reachable states are exactly the consistent ones, and closed under transition", () => {
    const key = (s: LoanState) => `${s.status}/${s.outcome}/${s.overdue}`;
    const seen = new Map<string, LoanState>([[key(start), start]]);
    const queue = [start];
    const fired = new Set<LoanEventType>();
    while (queue.length > 0) {
      const s = queue.shift()!;
      for (const t of TRIGGERS) {
        const r = transition(s, t);
        if (!r.ok) continue;
        r.events.forEach((e) => fired.add(e));
        if (!seen.has(key(r.next))) {
          seen.set(key(r.next), r.next);
          queue.push(r.next);
        }
      }
    }
    expect([...seen.keys()].sort()).toEqual(
      [
        "CREATED/null/false",
        "CREATED/APPROVED/false",
        "CREATED/DECLINED/false",
        "CREATED/MANUAL_REVIEW/false",
        "ACTIVE/APPROVED/false",
        "ACTIVE/APPROVED/true",
        "DEFAULTED/APPROVED/true",
        "REPAID/APPROVED/false",
        "REPAID/APPROVED/true",
      ].sort(),
    );
    // Every loan event but the submission (which fires before the loan has a state) comes from the machine.
    expect([...fired].sort()).toEqual(LOAN_EVENT_TYPES.filter((e) => e !== "loan.application_submitted").sort());
  });
});

describe("isDeclined and isOpen", () => {
  test("over every state", () => {
    for (const s of ALL_STATES) {
      const declined = s.status === "CREATED" && s.outcome === "DECLINED";
      expect({ s, declined: isDeclined(s) }).toEqual({ s, declined });
      const open = (s.status === "CREATED" && !declined) || s.status === "ACTIVE" || s.status === "DEFAULTED";
      expect({ s, open: isOpen(s) }).toEqual({ s, open });
    }
  });
});

describe("event vocabulary", () => {
  test('all 16 event types (SPEC.md, wallet.gas_low of DECISIONS.md "Live wallets", loan.repayment_reversed of live reorgs, webhook.test sent by hand), the loan ones first', () => {
    expect(EVENT_TYPES.length).toBe(16);
    expect(new Set(EVENT_TYPES).size).toBe(16);
    expect([...LOAN_EVENT_TYPES]).toEqual([
      "loan.application_submitted",
      "loan.decision",
      "loan.approved",
      "loan.rejected",
      "loan.funded",
      "loan.funding_failed",
      "loan.repaid",
      "loan.repayment_failed",
      "loan.repayment_reversed",
      "loan.overdue",
      "loan.defaulted",
    ]);
    expect(EVENT_TYPES.filter((t) => !t.startsWith("loan."))).toEqual([
      "liquidity.low",
      "liquidity.unavailable",
      "webhook.delivery_failed",
      "wallet.gas_low",
      "webhook.test",
    ]);
  });
});
