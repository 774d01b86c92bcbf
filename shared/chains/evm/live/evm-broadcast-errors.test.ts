import { describe, expect, test } from "bun:test";
import { HttpRequestError, RpcRequestError } from "viem";
import { redactNodeText, safeRpcReason } from "./evm-broadcast-errors.ts";

describe("safeRpcReason", () => {
  test("a node's words without what may be its provider's key: an echoed URL, a key in a JSON-RPC message (an audit saw both reach loan.funding_failed)", () => {
    const echoed = new HttpRequestError({
      url: "https://rpc.example/v2/RPCSECRETKEY9f3a",
      status: 502,
      details: "<html>Bad gateway for https://rpc.example/v2/RPCSECRETKEY9f3a?x=1</html>",
    });
    expect(safeRpcReason(echoed)).toBe("<html>Bad gateway for <url></html>");
    const quota = new RpcRequestError({ url: "https://rpc.example/v2/k", body: {}, error: { code: -32005, message: "key RPCSECRETKEY9f3a over quota" } });
    expect(safeRpcReason(quota)).toBe("key <redacted> over quota");
    for (const text of [JSON.stringify(echoed), JSON.stringify(quota)]) expect(safeRpcReason(JSON.parse(text))).not.toContain("RPCSECRETKEY");
  });

  test("what a merchant needs stays: words, numbers, addresses and hashes", () => {
    const text = `insufficient funds for gas * price + value: address 0x${"ab".repeat(20)} have 0 want 123456789012345678`;
    expect(redactNodeText(text)).toBe(text);
    expect(redactNodeText("nonce too low: next nonce 12, tx nonce 11")).toBe("nonce too low: next nonce 12, tx nonce 11");
  });
});
