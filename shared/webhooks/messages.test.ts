import { describe, expect, test } from "bun:test";
import { BUNDLE_ATTEMPTS, bundledAttempts, type DeliveryAttempt, itemsOf } from "./messages.ts";

const attempts = (n: number): DeliveryAttempt[] => Array.from({ length: n }, (_, i) => ({ kind: "delivery", deliveryId: `d${i}`, attempt: 1 }));

describe("deliveries messages", () => {
  test("first attempts go 10 to a message, in order; a lone attempt goes as itself", () => {
    expect(BUNDLE_ATTEMPTS).toBe(10);
    const sent = bundledAttempts(attempts(23));
    expect(sent.map((m) => itemsOf(m.body).length)).toEqual([10, 10, 3]);
    expect(sent.flatMap((m) => itemsOf(m.body))).toEqual(attempts(23));
    expect(sent[0]!.body.kind).toBe("deliveries");
    expect(bundledAttempts(attempts(11)).map((m) => m.body)).toEqual([{ kind: "deliveries", attempts: attempts(10) }, attempts(11)[10]!]);
    expect(bundledAttempts([])).toEqual([]);
  });

  test("a single attempt or e-mail message is its own one item", () => {
    expect(itemsOf({ kind: "delivery", deliveryId: "d", attempt: 2 })).toEqual([{ kind: "delivery", deliveryId: "d", attempt: 2 }]);
    expect(itemsOf({ kind: "email", notificationId: "n" })).toEqual([{ kind: "email", notificationId: "n" }]);
  });
});
