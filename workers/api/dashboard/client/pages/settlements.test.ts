import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Ctx } from "../context.ts";
import type { Unmatched } from "../loans/types.ts";

/**
 * The Settlements page's unmatched payments name each amount's asset: the
 * API gives an unmatched payment's amount in its own asset (3 TON as
 * "3.00"), and a bare amount read like 3.00 of the stablecoin. Rendered with
 * a minimal DOM of its own and the API answered by a fake fetch.
 */
type FakeNode = { tag: string; attrs: Record<string, string>; children: (FakeNode | string)[] };
const text = (n: FakeNode | string): string => (typeof n === "string" ? n : n.children.map(text).join(""));
const all = (n: FakeNode | string, tag: string): FakeNode[] =>
  typeof n === "string" ? [] : [...(n.tag === tag ? [n] : []), ...n.children.flatMap((c) => all(c, tag))];

const row = (u: Partial<Unmatched>): Unmatched => ({
  id: crypto.randomUUID(),
  chain: "TON",
  mode: "live",
  txHash: "h",
  from: "0:aa",
  to: "0:bb",
  token: "0:dd",
  amount: "3.00",
  asset: "USDT",
  comment: null,
  claimedLoanId: null,
  reason: "no such loan",
  settles: true,
  attributedLoanId: null,
  attributedAt: null,
  createdAt: "2026-11-24T00:00:00.000Z",
  ...u,
});

const saved = { document: (globalThis as { document?: unknown }).document, fetch: globalThis.fetch };
beforeAll(() => {
  (globalThis as { document?: unknown }).document = {
    createElement(tag: string) {
      const node = {
        tag,
        attrs: {} as Record<string, string>,
        children: [] as (FakeNode | string)[],
        setAttribute(k: string, v: string) {
          node.attrs[k] = v;
        },
        removeAttribute: (k: string) => void delete node.attrs[k],
        addEventListener() {},
        append: (...c: (FakeNode | string)[]) => void node.children.push(...c),
      };
      return node;
    },
  };
  const unmatched = {
    data: [
      row({ token: "TON", asset: "TON", settles: false, reason: "a TON transfer, not USDT" }),
      row({ token: "0:cc", asset: null, amount: "110000000", settles: false, reason: "another jetton" }),
      row({}),
    ],
    nextCursor: null,
  };
  globalThis.fetch = (async (url: string | URL) =>
    new Response(JSON.stringify(String(url).startsWith("/v1/settlements/unmatched") ? unmatched : { data: [], nextCursor: null }), {
      status: 200,
    })) as unknown as typeof fetch;
});
afterAll(() => {
  (globalThis as { document?: unknown }).document = saved.document;
  globalThis.fetch = saved.fetch;
});

test("each unmatched amount names its asset: 3 TON reads 3.00 TON, not like 3.00 USDT; another jetton's in its base units", async () => {
  const { settlementsPage } = await import("./settlements.ts");
  const ctx = { mode: "live", canWrite: false, params: {}, query: new URLSearchParams(), navigate() {}, refresh() {}, async reload() {} } as unknown as Ctx;
  const page = (await settlementsPage.render(ctx)) as unknown as FakeNode;
  const unmatchedTable = all(page, "table").find((tb) => text(all(tb, "caption")[0]!).startsWith("Unmatched payments"))!;
  const column = all(all(unmatchedTable, "thead")[0]!, "th").map(text).indexOf("Amount");
  const amounts = all(all(unmatchedTable, "tbody")[0]!, "tr").map((tr) => text(all(tr, "td")[column]!));
  expect(amounts).toEqual(["3.00 TON", "110000000 base units of the token 0:cc", "3.00 USDT"]);
});
