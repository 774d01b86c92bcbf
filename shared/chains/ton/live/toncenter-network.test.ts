import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Address, beginCell, Cell } from "@ton/core";
import { toncenterNetwork } from "./toncenter-network.ts";

/**
 * The production TonNetwork against a local stand-in for toncenter's HTTP API
 * v2 (`jsonRPC`), through TonClient and the fetch adapter a Worker needs: the
 * API key travels as `X-API-Key`, get-methods, account state and broadcasts
 * map to toncenter's methods, and an error answer throws.
 */

type Call = { method: string; params: Record<string, unknown>; apiKey: string | null; userAgent: string | null };
const calls: Call[] = [];
let server: ReturnType<typeof Bun.serve>;
const wallet = Address.parseRaw(`0:${"11".repeat(32)}`);
const blockId = { "@type": "ton.blockIdExt", workchain: -1, shard: "-9223372036854775808", seqno: 1, root_hash: "", file_hash: "" };

beforeAll(() => {
  server = Bun.serve({
    port: 0,
    async fetch(request) {
      const { method, params } = (await request.json()) as { method: string; params: Record<string, unknown> };
      calls.push({ method, params, apiKey: request.headers.get("x-api-key"), userAgent: request.headers.get("user-agent") });
      const ok = (result: unknown) => Response.json({ ok: true, result });
      switch (method) {
        case "runGetMethod":
          return params.method === "seqno" ? ok({ gas_used: 1, exit_code: 0, stack: [["num", "0x2a"]] }) : ok({ gas_used: 1, exit_code: 11, stack: [] });
        case "getAddressInformation":
          return ok({
            balance: "1500000000",
            state: "uninitialized",
            code: "",
            data: "",
            last_transaction_id: { "@type": "internal.transactionId", lt: "7", hash: Buffer.alloc(32).toString("base64") },
            block_id: blockId,
            sync_utime: 1,
          });
        case "sendBoc":
          return ok({ "@type": "ok" });
        default:
          return Response.json({ ok: false, error: "rate limited", code: 429 }, { status: 429 });
      }
    },
  });
});
afterAll(() => server.stop(true));

describe("toncenterNetwork", () => {
  test("get-methods, account state and broadcasts go to toncenter's jsonRPC with the API key", async () => {
    const network = toncenterNetwork({ rpcUrl: `http://127.0.0.1:${server.port}/api/v2/jsonRPC`, apiKey: "key-1" });
    expect((await network.runGetMethod(wallet, "seqno")).readNumber()).toBe(42);
    expect(await network.account(wallet)).toEqual({ state: "uninit", balance: 1_500_000_000n });
    const message = beginCell().storeUint(7, 8).endCell();
    await network.sendExternal(message);
    expect(calls.map((c) => c.method)).toEqual(["runGetMethod", "getAddressInformation", "sendBoc"]);
    expect(calls.every((c) => c.apiKey === "key-1")).toBe(true);
    // Sent by fetch (what a Worker has), not by axios's Node http adapter (which names itself axios/…).
    expect(calls.some((c) => c.userAgent?.startsWith("axios"))).toBe(false);
    expect(calls[0]!.params).toMatchObject({ address: wallet.toString(), method: "seqno" });
    expect(Cell.fromBase64(String(calls[2]!.params.boc)).equals(message)).toBe(true);
  });

  test("a get-method that exits with an error, or an error answer (rate limit): throws, never a made-up value", async () => {
    const network = toncenterNetwork({ rpcUrl: `http://127.0.0.1:${server.port}/api/v2/jsonRPC`, apiKey: null });
    await expect(network.runGetMethod(wallet, "get_wallet_data")).rejects.toThrow();
    await expect(network.transactions(wallet, { limit: 10 })).rejects.toThrow();
  });
});
