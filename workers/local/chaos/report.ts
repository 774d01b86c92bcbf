import type { Findings } from "./verify.ts";

/** One line of the chaos report. */
export type ReportRow = {
  fault: string;
  /** What ran under the fault, e.g. "300 loans, 60 repayments, 1,020 events". */
  load: string;
  lost: number;
  doubled: number;
  /** Delay to recovery (ms): from the fault's end (or the event's commit) to the event's first delivery. */
  p99Ms: number;
  maxMs: number;
  /** Every target held. */
  ok: boolean;
  notes?: string;
  /** What the verification counted (for the tests' own assertions). */
  findings?: Findings;
};

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * The row for a fault from its findings: lost counts loans, fundings,
 * repayments and events that went missing; doubled counts duplicates of
 * them, and events delivered twice to one endpoint (at-least-once delivery
 * allows it: the receiver deduplicates on the event id, README "Webhooks").
 * Delays run from `since(event)` to its first delivery.
 */
export function rowOf(fault: string, load: string, f: Findings, since: (e: { createdAt: string }) => number, notes?: string): ReportRow {
  const delays = f.events.flatMap((e) => {
    const at = f.firstDelivery.get(e.id);
    return at === undefined ? [] : [Math.max(0, at - since(e))];
  });
  const lost = f.loansLost + f.notFunded + f.repaymentsDropped + f.eventsLost;
  const doubledMoney = f.loansDuplicated + f.fundedTwice + f.repaymentsDoubled + f.loanEventsDoubled;
  return {
    fault,
    load,
    lost,
    doubled: doubledMoney + f.eventsDoubled,
    p99Ms: percentile(delays, 99),
    maxMs: delays.length ? Math.max(...delays) : 0,
    ok: lost === 0 && doubledMoney === 0 && f.overAttempted === 0 && f.wronglyEnded === 0,
    findings: f,
    notes: [
      notes,
      f.eventsDoubled ? `${f.eventsDoubled} event(s) delivered twice (at-least-once)` : "",
      f.overAttempted ? `${f.overAttempted} over 3 attempts` : "",
    ]
      .filter(Boolean)
      .join("; "),
  };
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The report as a Markdown table (printed by `npm run chaos`, kept in the README). */
export function formatReport(rows: ReportRow[]): string {
  const lines = [
    "| Fault | Under load | Lost | Doubled | p99 to recovery | Max to recovery | Targets |",
    "| --- | --- | ---: | ---: | ---: | ---: | --- |",
    ...rows.map(
      (r) =>
        `| ${r.fault} | ${r.load} | ${r.lost} | ${r.doubled} | ${seconds(r.p99Ms)} | ${seconds(r.maxMs)} | ${r.ok ? "held" : "MISSED"}${r.notes ? ` (${r.notes})` : ""} |`,
    ),
  ];
  return lines.join("\n");
}
