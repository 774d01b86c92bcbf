import { expect, test } from "bun:test";
import { createTestDb } from "../../../db/test-db.ts";
import type { Logger } from "../../../shared/observability/logger.ts";
import { insertEventHistory } from "../../../shared/testing/event-history.ts";
import type { CronEnv } from "../env.ts";
import { JOBS } from "../jobs.ts";
import { retentionDays, retentionJob } from "./retention.ts";

const TENANT = "00000000-0000-4000-8000-00000000000a";
const DAY = 86_400_000;

test("RETENTION_DAYS: 90 when unset, whole days of at least 30, anything else refused", () => {
  expect(retentionDays({})).toBe(90);
  expect(retentionDays({ RETENTION_DAYS: "" })).toBe(90);
  expect(retentionDays({ RETENTION_DAYS: "365" })).toBe(365);
  expect(retentionDays({ RETENTION_DAYS: "30" })).toBe(30);
  for (const bad of ["29", "0", "-90", "90.5", "ninety", "1e3"]) expect(() => retentionDays({ RETENTION_DAYS: bad })).toThrow(`got "${bad}"`);
});

test("the job runs every minute, after the relay, and purges the database of the worker's env (DB)", async () => {
  expect(JOBS.at(-1)).toBe(retentionJob);
  expect(retentionJob.crons).toEqual(["* * * * *"]);
  const { client, close } = await createTestDb();
  await client.execute({ sql: "INSERT INTO tenants (id, name, created_at) VALUES (?, 'a', 0)", args: [TENANT] });
  const now = Date.now();
  await insertEventHistory(client, { prefix: "old-", firstSeq: 1, count: 4, tenantIds: [TENANT], at: now - 91 * DAY, relayed: true, emailStatus: "SENT" });
  await insertEventHistory(client, { prefix: "kept-", firstSeq: 5, count: 2, tenantIds: [TENANT], at: now - 89 * DAY, relayed: true, emailStatus: "SENT" });
  const lines: string[] = [];
  const log: Logger = { info: (m, f) => lines.push(`${m} ${JSON.stringify(f)}`), error: (m) => lines.push(m) };
  const env = { DB: client as unknown as D1Database } as CronEnv;

  // A bad period deletes nothing.
  await expect(retentionJob.run({ env: { ...env, RETENTION_DAYS: "7" }, cron: "* * * * *", scheduledTime: now, log })).rejects.toThrow("RETENTION_DAYS");
  expect((await client.execute("SELECT COUNT(*) AS n FROM events")).rows[0]!.n).toBe(6);

  await retentionJob.run({ env, cron: "* * * * *", scheduledTime: now, log });
  const left = (await client.execute("SELECT id FROM events ORDER BY seq")).rows.map((r) => r.id);
  expect(left).toEqual(["kept-0", "kept-1"]);
  expect(lines).toEqual([
    'history purged {"events":4,"notifications":4,"deliveries":0,"attempts":0,"walletChallenges":0,"emailVerifications":0,"emailReleases":0}',
  ]);
  close();
});
