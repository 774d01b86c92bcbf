import { describe, expect, test } from "bun:test";
import { minuteTurn, windowOfTurn } from "./turns.ts";

describe("windowOfTurn", () => {
  test("all items when they fit; otherwise the next `max` each turn, wrapping, so consecutive turns reach every item", () => {
    const items = ["a", "b", "c", "d", "e"];
    expect(windowOfTurn(items, 5, 7)).toEqual(items);
    expect(windowOfTurn(items, 2, 0)).toEqual(["a", "b"]);
    expect(windowOfTurn(items, 2, 1)).toEqual(["c", "d"]);
    expect(windowOfTurn(items, 2, 2)).toEqual(["e", "a"]);
    const many = Array.from({ length: 250 }, (_, i) => i);
    const reached = new Set([0, 1, 2].flatMap((k) => windowOfTurn(many, 100, 28_000_000 + k)));
    expect(reached.size).toBe(250);
    expect(windowOfTurn([], 3, 9)).toEqual([]);
  });

  test("the minute since the epoch", () => {
    expect(minuteTurn(new Date(119_999))).toBe(1);
  });
});
