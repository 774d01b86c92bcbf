import { oneLine } from "../domain/plain-text.ts";
import type { EventEnvelope } from "../../db/schema/events.ts";

type LoanData = {
  id?: string;
  borrowerRef?: string;
  principalAmount?: string;
  stablecoin?: string;
  chain?: string;
  totalDue?: string;
  amountPaid?: string;
  amountDue?: string;
  surplus?: string;
  decision?: { outcome?: string } | null;
};

const TITLES: Record<EventEnvelope["type"], string> = {
  "loan.application_submitted": "Loan application submitted",
  "loan.decision": "Underwriting decision",
  "loan.approved": "Loan approved in review",
  "loan.rejected": "Loan rejected in review",
  "loan.funded": "Loan funded",
  "loan.funding_failed": "Loan funding failed",
  "loan.repaid": "Loan repaid",
  "loan.repayment_failed": "Repayment failed",
  "loan.repayment_reversed": "Repayment reversed by a chain reorganization",
  "loan.overdue": "Loan overdue",
  "loan.defaulted": "Loan defaulted",
  "liquidity.low": "Liquidity is running low",
  "liquidity.unavailable": "Liquidity unavailable for a draw",
  "webhook.delivery_failed": "Webhook delivery failed",
  "wallet.gas_low": "Gas wallet running low",
  // Never a notification (the relay never sees it); here because every type has a title.
  "webhook.test": "Webhook test event",
};

/** The dashboard notification (and owner e-mail) text of an event. Plain text; no secrets in events. */
export function describeEvent(envelope: EventEnvelope): { title: string; body: string } {
  const title = TITLES[envelope.type];
  const data = envelope.data as {
    loan?: LoanData;
    payment?: { amount?: string; txHash?: string };
    delivery?: { endpointUrl?: string; eventType?: string; eventId?: string };
    pool?: { headroom?: string; stablecoin?: string };
    wallet?: { address?: string; chain?: string; nativeBalance?: string | null; gasThreshold?: string | null };
  };
  const lines: string[] = [];
  if (data.loan) {
    const l = data.loan;
    lines.push(`Loan ${l.id} for borrower ${oneLine(String(l.borrowerRef))}: ${l.principalAmount} ${l.stablecoin} on ${l.chain}.`);
    if (envelope.type === "loan.decision" && l.decision?.outcome) lines.push(`Decision: ${l.decision.outcome}.`);
    const paidInFull = l.amountPaid && Number(l.amountPaid) > 0 && l.amountDue !== undefined && Number(l.amountDue) === 0;
    // A repaid loan's text says it was paid, and how much; "Total due" read as if something were still owed.
    if (paidInFull) lines.push(`Paid in full: ${l.amountPaid} ${l.stablecoin}.`);
    else if (l.totalDue) lines.push(`Total due: ${l.totalDue} ${l.stablecoin}.`);
    // Paid over the total: the borrower is owed it back (a SURPLUS settlement), which the text said nothing of.
    if (paidInFull && l.surplus && Number(l.surplus) > 0)
      lines.push(`Paid over the total: ${l.surplus} ${l.stablecoin}, owed back to the borrower (GET /v1/settlements/${l.id}).`);
    // Partly paid: what is left, not only the total (a partly paid loan's overdue e-mail named the whole total).
    if (l.amountPaid && Number(l.amountPaid) > 0 && l.amountDue && Number(l.amountDue) > 0)
      lines.push(`Paid so far: ${l.amountPaid} ${l.stablecoin}; amount due now: ${l.amountDue} ${l.stablecoin}.`);
  }
  // The payment that failed: its amount and transaction, as the event's `data.payment` names them.
  if (envelope.type === "loan.repayment_failed" && data.payment?.amount && data.loan)
    lines.push(`Failed payment: ${data.payment.amount} ${data.loan.stablecoin}, transaction ${oneLine(String(data.payment.txHash))}.`);
  if (data.pool) lines.push(`Pool headroom: ${data.pool.headroom} ${data.pool.stablecoin}.`);
  if (data.wallet) {
    const w = data.wallet;
    lines.push(`GAS wallet ${w.address} on ${w.chain} holds ${w.nativeBalance}, under its threshold of ${w.gasThreshold}: top it up, or funding waits.`);
  }
  if (data.delivery)
    lines.push(`Event ${data.delivery.eventType} (${data.delivery.eventId}) could not be delivered to ${data.delivery.endpointUrl} after 3 attempts.`);
  lines.push(`Event ${envelope.type} (${envelope.id}) at ${envelope.createdAt}.`);
  return { title, body: lines.join("\n") };
}
