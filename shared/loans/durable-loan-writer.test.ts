import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { LOAN_SHARDS, loanObjectName } from "./durable-loan-writer.ts";
import { keyedMutex } from "./loan-commands.ts";

describe("loanObjectName: the loan object a command goes to", () => {
  const tenantId = crypto.randomUUID();

  test("every command of a loan reaches the same object, one of its tenant's", () => {
    const loanId = crypto.randomUUID();
    const name = loanObjectName({ tenantId, loanId });
    expect(name).toMatch(new RegExp(`^loans:${tenantId}:(\\d+)$`));
    expect(Number(name.split(":")[2])).toBeLessThan(LOAN_SHARDS);
    for (let i = 0; i < 5; i++) expect(loanObjectName({ tenantId, loanId })).toBe(name);
  });

  test("another tenant's command never reaches this tenant's objects", () => {
    const loanId = crypto.randomUUID();
    const other = crypto.randomUUID();
    expect(loanObjectName({ tenantId: other, loanId }).startsWith(`loans:${other}:`)).toBe(true);
    expect(loanObjectName({ tenantId: other, loanId })).not.toBe(loanObjectName({ tenantId, loanId }));
  });

  test("loans spread over all of a tenant's objects", () => {
    const counts = new Map<string, number>();
    const n = 16_000;
    for (let i = 0; i < n; i++) {
      const name = loanObjectName({ tenantId, loanId: crypto.randomUUID() });
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    expect(counts.size).toBe(LOAN_SHARDS);
    const expected = n / LOAN_SHARDS;
    for (const c of counts.values()) {
      expect(c).toBeGreaterThan(expected * 0.85);
      expect(c).toBeLessThan(expected * 1.15);
    }
  });

  test("a loan object keeps nothing in storage (so which object runs a loan can change safely)", () => {
    // The loan's row and its write token in D1 are its only state (README "One writer per loan").
    const source = readFileSync(new URL("./loan-object.ts", import.meta.url), "utf8");
    expect(source).not.toMatch(/\.storage\b/);
    expect(source).not.toMatch(/blockConcurrencyWhile|setAlarm/);
  });
});

describe("keyedMutex: how a loan object runs the commands of its loans", () => {
  const gate = () => {
    let open!: () => void;
    const opened = new Promise<void>((r) => (open = r));
    return { open, opened };
  };

  test("one loan's commands run one at a time, in order; another loan's run alongside", async () => {
    const withLock = keyedMutex();
    const log: string[] = [];
    const first = gate();
    const a1 = withLock("loan-a", async () => {
      log.push("a1 start");
      await first.opened;
      log.push("a1 end");
    });
    const a2 = withLock("loan-a", async () => {
      log.push("a2");
    });
    const b1 = withLock("loan-b", async () => {
      log.push("b1");
    });
    await b1;
    // loan-b's command did not wait for loan-a's, and loan-a's second waits for its first.
    expect(log).toEqual(["a1 start", "b1"]);
    first.open();
    await Promise.all([a1, a2]);
    expect(log).toEqual(["a1 start", "b1", "a1 end", "a2"]);
  });

  test("a failed command does not stop the next one of its loan", async () => {
    const withLock = keyedMutex();
    const failed = withLock("loan-a", async () => {
      throw new Error("D1 overloaded");
    });
    const next = withLock("loan-a", async () => "ran");
    await expect(failed).rejects.toThrow("D1 overloaded");
    expect(await next).toBe("ran");
  });
});
