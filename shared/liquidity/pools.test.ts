import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { liquidityPools } from "../../db/schema/liquidity-pools.ts";
import { newId } from "../domain/ids.ts";
import { signUpTenant } from "../testing/fixtures.ts";
import { createTestApp, type TestApp } from "../testing/harness.ts";
import { poolFor } from "./pools.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('poolFor selects by the loan\'s mode (DECISIONS.md "Modes")', () => {
  test("a live loan never draws on the sandbox pool, and a sandbox loan never on a live one, whichever is older", async () => {
    const owner = await signUpTenant(t);
    const [sandboxPool] = await t.db
      .select()
      .from(liquidityPools)
      .where(and(eq(liquidityPools.tenantId, owner.tenantId), eq(liquidityPools.stablecoin, "USDC")));
    expect(sandboxPool!.mode).toBe("sandbox");

    // Signup makes no live pool: a live loan finds none and waits for liquidity.
    expect(await poolFor(t.db, { tenantId: owner.tenantId, mode: "live" }, "USDC")).toBeNull();
    expect((await poolFor(t.db, { tenantId: owner.tenantId, mode: "sandbox" }, "USDC"))?.id).toBe(sandboxPool!.id);

    // A live pool older than the sandbox one: the oldest-first choice must still stay within the mode.
    const older = new Date(sandboxPool!.createdAt.getTime() - 60_000);
    const livePoolId = newId();
    await t.db.insert(liquidityPools).values({
      id: livePoolId,
      tenantId: owner.tenantId,
      mode: "live",
      stablecoin: "USDC",
      available: 5_000_000n,
      reserved: 0n,
      lowThreshold: 0n,
      createdAt: older,
      updatedAt: older,
    });
    expect((await poolFor(t.db, { tenantId: owner.tenantId, mode: "live" }, "USDC"))?.id).toBe(livePoolId);
    expect((await poolFor(t.db, { tenantId: owner.tenantId, mode: "sandbox" }, "USDC"))?.id).toBe(sandboxPool!.id);
  });
});
