/**
 * The loan lifecycle as a pure transition table (SPEC.md "States and
 * transitions", DECISIONS.md "Loans"). Verbs ask it whether a change is
 * allowed and which events it fires, then commit the change as a conditional
 * update together with those events; a refusal maps to 409.
 */
import { EVENT_TYPES, LOAN_STATUSES } from "./vocabularies.ts";
import type { DecisionOutcome } from "./underwriting.ts";

export { EVENT_TYPES, LOAN_STATUSES };
export type LoanStatus = (typeof LOAN_STATUSES)[number];
export type EventType = (typeof EVENT_TYPES)[number];
export type LoanEventType = Extract<EventType, `loan.${string}`>;

export const LOAN_EVENT_TYPES: readonly LoanEventType[] = EVENT_TYPES.filter((t): t is LoanEventType => t.startsWith("loan."));

/**
 * `outcome` is null only between creation and underwriting. A declined loan
 * stays CREATED (SPEC.md "Synthetic DECLINED state"). `overdue` records that
 * `loan.overdue` has fired, so the sweep fires it once.
 */
export type LoanState = { status: LoanStatus; outcome: DecisionOutcome | null; overdue: boolean };

export type LoanTrigger =
  | { kind: "DECIDE"; outcome: DecisionOutcome }
  | { kind: "REVIEW_APPROVE" }
  | { kind: "REVIEW_REJECT" }
  | { kind: "FUNDING_CONFIRMED" }
  | { kind: "FUNDING_FAILED" }
  | { kind: "MARK_OVERDUE" }
  | { kind: "GRACE_ELAPSED" }
  | { kind: "REPAYMENT_CONFIRMED" }
  /** A settled transfer that does not cover the total due: recorded, the status stays. */
  | { kind: "PARTIAL_REPAYMENT" }
  | { kind: "REPAYMENT_FAILED" }
  /**
   * A credited repayment whose block a live chain's reorg orphaned: it never
   * happened on the chain that won. A loan it had REPAID goes `back` to what
   * it was (ACTIVE or DEFAULTED); a partial one leaves the status as it is.
   */
  | { kind: "REPAYMENT_REVERSED"; back: "ACTIVE" | "DEFAULTED" };

export type LoanTriggerKind = LoanTrigger["kind"];

export type TransitionResult = { ok: true; next: LoanState; events: LoanEventType[] } | { ok: false; reason: string };

/** What each trigger does, in the words a refusal (a 409 the merchant reads) uses: not the internal trigger names. */
export const TRIGGER_WORDS: Record<LoanTriggerKind, string> = {
  DECIDE: "An underwriting decision",
  REVIEW_APPROVE: "Approving it in review",
  REVIEW_REJECT: "Rejecting it in review",
  FUNDING_CONFIRMED: "Confirming its funding",
  FUNDING_FAILED: "Recording a funding failure",
  MARK_OVERDUE: "Marking it overdue",
  GRACE_ELAPSED: "Defaulting it",
  REPAYMENT_CONFIRMED: "Crediting a repayment",
  PARTIAL_REPAYMENT: "Crediting a partial repayment",
  REPAYMENT_FAILED: "Recording a failed repayment",
  REPAYMENT_REVERSED: "Reversing a repayment",
};

const describeState = (s: LoanState): string =>
  s.status === "CREATED" ? `CREATED (outcome ${s.outcome ?? "not yet decided"})` : s.overdue && s.status === "ACTIVE" ? "ACTIVE (overdue)" : s.status;

/**
 * The next state and the events to fire for `trigger`, or why it is refused.
 * Fields a transition does not mention are carried over unchanged.
 *
 * @example transition({ status: "ACTIVE", outcome: "APPROVED", overdue: false }, { kind: "GRACE_ELAPSED" })
 * // { ok: true, next: { status: "DEFAULTED", outcome: "APPROVED", overdue: true }, events: ["loan.overdue", "loan.defaulted"] }
 */
export function transition(state: LoanState, trigger: LoanTrigger): TransitionResult {
  const go = (next: Partial<LoanState>, events: LoanEventType[]): TransitionResult => ({
    ok: true,
    next: { ...state, ...next },
    events,
  });
  const refuse = (why: string): TransitionResult => ({
    ok: false,
    reason: `${TRIGGER_WORDS[trigger.kind]} is not allowed on a loan that is ${describeState(state)}: ${why}`,
  });

  switch (state.status) {
    case "CREATED":
      switch (trigger.kind) {
        case "DECIDE":
          return state.outcome === null ? go({ outcome: trigger.outcome }, ["loan.decision"]) : refuse("underwriting has already decided it");
        case "REVIEW_APPROVE":
        case "REVIEW_REJECT":
          // A second review finds the outcome no longer MANUAL_REVIEW (DECISIONS.md: 409).
          if (state.outcome !== "MANUAL_REVIEW") return refuse("only a loan awaiting manual review can be reviewed");
          return trigger.kind === "REVIEW_APPROVE" ? go({ outcome: "APPROVED" }, ["loan.approved"]) : go({ outcome: "DECLINED" }, ["loan.rejected"]);
        case "FUNDING_CONFIRMED":
        case "FUNDING_FAILED":
          if (state.outcome !== "APPROVED") return refuse("only an approved loan is funded");
          return trigger.kind === "FUNDING_CONFIRMED" ? go({ status: "ACTIVE" }, ["loan.funded"]) : go({}, ["loan.funding_failed"]);
        default:
          return refuse("the loan is not funded, so it cannot be overdue, default or be repaid");
      }

    case "ACTIVE":
      switch (trigger.kind) {
        case "MARK_OVERDUE":
          return state.overdue ? refuse("loan.overdue has already fired") : go({ overdue: true }, ["loan.overdue"]);
        case "GRACE_ELAPSED":
          // A sweep that first sees the loan after the grace period still reports both facts, in time order.
          return go({ status: "DEFAULTED", overdue: true }, state.overdue ? ["loan.defaulted"] : ["loan.overdue", "loan.defaulted"]);
        case "REPAYMENT_CONFIRMED":
          return go({ status: "REPAID" }, ["loan.repaid"]);
        case "PARTIAL_REPAYMENT":
          return go({}, []);
        case "REPAYMENT_FAILED":
          return go({}, ["loan.repayment_failed"]);
        case "REPAYMENT_REVERSED":
          return go({}, ["loan.repayment_reversed"]);
        default:
          return refuse("the loan is already funded");
      }

    case "DEFAULTED":
      switch (trigger.kind) {
        // DECISIONS.md "Statuses after the end": a repayment after default is a recovery, never dropped.
        case "REPAYMENT_CONFIRMED":
          return go({ status: "REPAID" }, ["loan.repaid"]);
        case "PARTIAL_REPAYMENT":
          return go({}, []);
        case "REPAYMENT_FAILED":
          return go({}, ["loan.repayment_failed"]);
        case "REPAYMENT_REVERSED":
          return go({}, ["loan.repayment_reversed"]);
        case "MARK_OVERDUE":
        case "GRACE_ELAPSED":
          return refuse("the loan has already defaulted");
        default:
          return refuse("the loan is already funded");
      }

    case "REPAID":
      // Final, except that a repayment the chain itself took back (a reorg) was never made.
      if (trigger.kind === "REPAYMENT_REVERSED") {
        // Only an overdue loan can have defaulted before it was repaid.
        if (trigger.back === "DEFAULTED" && !state.overdue) return refuse("a loan that was never overdue cannot go back to DEFAULTED");
        return go({ status: trigger.back }, ["loan.repayment_reversed"]);
      }
      return refuse("REPAID is final");

    default: {
      const unknown: never = state.status;
      return refuse(`unknown status ${String(unknown)}`);
    }
  }
}

/**
 * A loan that underwriting or a reviewer declined; shown as the derived
 * DECLINED status (SPEC.md "Synthetic DECLINED state").
 */
export const isDeclined = (state: LoanState): boolean => state.status === "CREATED" && state.outcome === "DECLINED";

/**
 * Counts toward `maxOpenLoansPerBorrower`: every loan the borrower has not
 * repaid and that was not declined, i.e. CREATED (undecided, in review, approved
 * or awaiting funding), ACTIVE, and DEFAULTED, since a defaulted loan is still
 * owed and a policy capping exposure must see it.
 *
 * @example isOpen({ status: "DEFAULTED", outcome: "APPROVED", overdue: true }) // true
 */
export const isOpen = (state: LoanState): boolean => state.status !== "REPAID" && !isDeclined(state);
