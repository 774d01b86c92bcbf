import { expect, test } from "bun:test";
import type { UnmatchedRow } from "../../../../shared/settlement/unmatched-verbs.ts";
import { getAddress } from "viem";
import { liveChainSettings } from "../../../../shared/chains/live/live-config.ts";
import { unmatchedView } from "./unmatched-schemas.ts";

const row = (r: Partial<UnmatchedRow>) =>
  ({
    id: crypto.randomUUID(),
    chain: "TON",
    txHash: "tx",
    logIndex: 0,
    blockNumber: 1,
    fromAddress: "0:aa",
    toAddress: "0:bb",
    comment: null,
    claimedLoanId: null,
    reason: "a TON transfer, not USDT",
    attributedLoanId: null,
    attributedAt: null,
    attributedBy: null,
    paidAt: new Date(0),
    createdAt: new Date(0),
    ...r,
  }) as UnmatchedRow;

test("an unmatched payment's amount is in its own asset: the stablecoin in its units, TON in TON (nanotons read as 10^-6 units showed 3 TON as 3000.00), another jetton in base units", () => {
  expect(unmatchedView(row({ token: "TON", settles: false, amount: 3_000_000_000n })).amount).toBe("3.00");
  expect(unmatchedView(row({ token: "TON", settles: false, amount: 10_200_000n })).amount).toBe("0.0102");
  expect(unmatchedView(row({ token: "TON", settles: false, amount: 1n })).amount).toBe("0.000000001");
  expect(unmatchedView(row({ token: "0:cc", settles: false, amount: 110_000_000n })).amount).toBe("110000000");
  expect(unmatchedView(row({ token: "0:dd", settles: true, amount: 110_000_000n })).amount).toBe("110.00");
  expect(unmatchedView(row({ token: "0:dd", settles: true, amount: 101_999_999n })).amount).toBe("101.999999");
  // And names it: the chain's stablecoin, TON, or null for another jetton.
  expect(unmatchedView(row({ token: "0:dd", settles: true, amount: 1n })).asset).toBe("USDT");
  expect(unmatchedView(row({ chain: "POLYGON_AMOY", token: "0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582", settles: true, amount: 1n })).asset).toBe("USDC");
  expect(unmatchedView(row({ token: "TON", settles: false, amount: 1n })).asset).toBe("TON");
  expect(unmatchedView(row({ token: "0:cc", settles: false, amount: 1n })).asset).toBeNull();
});

test("a live payment too large to store, in the deployment's own configured stablecoin (POLYGON_TOKEN_ADDRESS), is shown 0.00 in that stablecoin, not as another token's base units (review)", () => {
  const token = getAddress("0x5fbdb2315678afecb367f032d93f642f64180aa3");
  const live = liveChainSettings({
    POLYGON_RPC_URL: "http://127.0.0.1:8545",
    POLYGON_TOKEN_ADDRESS: token,
    POLYGON_POOL_ADDRESS: "0xe7f1725e7734ce288f8367e1bb143e90bb3f0512",
  } as never);
  const kept = row({ chain: "POLYGON", token, settles: false, amount: 0n, reason: "a transfer of 9007199254740993 units, more than can be stored" });
  const view = unmatchedView(kept, live);
  expect({ amount: view.amount, asset: view.asset }).toEqual({ amount: "0.00", asset: "USDC" });
  // Without the deployment's settings that address is no stablecoin this service knows.
  expect(unmatchedView(kept).asset).toBeNull();
});
