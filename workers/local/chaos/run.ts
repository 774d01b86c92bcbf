import { type CaseOptions, badReceivers, cronKilledHalfway, d1Faults, doReset, listenerCrash, overlappingCron, queueFaults } from "./cases.ts";
import { formatReport, type ReportRow } from "./report.ts";
import { sigkillCase } from "./sigkill.ts";

/**
 * `npm run chaos`: every fault of issue 15 on the real stack, one at a time,
 * under load; prints the report table (README "Reliability") and exits 1 if
 * any target was missed. `CHAOS_ONLY=<substring>` runs the matching faults;
 * `CHAOS_LOANS` sets the load (default 300 for SIGKILL, 60 for the others).
 */
const only = process.env.CHAOS_ONLY?.toLowerCase();
const loans = Number(process.env.CHAOS_LOANS ?? 0);
const heavy: CaseOptions = { load: { loans: loans || 300, clients: 10, repayEvery: 5 } };
const medium: CaseOptions = { load: { loans: loans || 60, clients: 10, repayEvery: 4 } };

const CASES: [string, () => Promise<ReportRow>][] = [
  ["sigkill 1s", () => sigkillCase({ ...heavy, killAfterMs: 1_000 })],
  ["sigkill 3s", () => sigkillCase({ ...heavy, killAfterMs: 3_000 })],
  ["sigkill 8s", () => sigkillCase({ ...heavy, killAfterMs: 8_000 })],
  ["do reset", () => doReset(medium)],
  ["d1", () => d1Faults(medium)],
  ["queue", () => queueFaults(medium)],
  ["receivers", () => badReceivers({ load: { loans: loans || 20, clients: 10, repayEvery: 4 } })],
  ["cron overlap", () => overlappingCron(medium)],
  ["cron killed", () => cronKilledHalfway(medium)],
  ["listener", () => listenerCrash(medium)],
];

const rows: ReportRow[] = [];
const started = Date.now();
for (const [name, run] of CASES) {
  if (only && !name.includes(only)) continue;
  const t0 = Date.now();
  try {
    rows.push(await run());
  } catch (err) {
    rows.push({ fault: name, load: "-", lost: -1, doubled: -1, p99Ms: 0, maxMs: 0, ok: false, notes: `the case failed: ${String(err).slice(0, 200)}` });
  }
  console.error(`${name}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}
console.log(`\n${formatReport(rows)}\n`);
console.log(`${rows.filter((r) => r.ok).length} of ${rows.length} faults held every target, in ${((Date.now() - started) / 1000).toFixed(0)} s.`);
process.exit(rows.every((r) => r.ok) ? 0 : 1);
