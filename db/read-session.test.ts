import { describe, expect, test } from "bun:test";
import { d1ReadSessions, freshAsClient } from "./read-session.ts";

describe("read sessions (D1 read replication)", () => {
  test("a client's well-formed bookmark starts the session; none, or a malformed one, reads the primary", () => {
    expect(freshAsClient("0000000b-00000005-00004f6e-9f1c2b3a")).toEqual({ bookmark: "0000000b-00000005-00004f6e-9f1c2b3a" });
    expect(freshAsClient(undefined)).toBe("first-primary");
    expect(freshAsClient("")).toBe("first-primary");
    expect(freshAsClient("first-unconstrained")).toBe("first-primary"); // a client cannot ask for a stale read
    expect(freshAsClient("'; DROP TABLE loans; --")).toBe("first-primary");
    expect(freshAsClient("a".repeat(200))).toBe("first-primary");
  });

  test("each session is a D1 session started where asked, and reports its latest bookmark", () => {
    const started: string[] = [];
    const binding = {
      withSession: (constraint: string) => {
        started.push(constraint);
        return { prepare: () => undefined, batch: async () => [], getBookmark: () => `bookmark-of-${constraint}` };
      },
    } as unknown as D1Database;
    const sessions = d1ReadSessions(binding);
    expect(sessions("first-unconstrained").bookmark()).toBe("bookmark-of-first-unconstrained");
    expect(sessions("first-primary").bookmark()).toBe("bookmark-of-first-primary");
    expect(sessions({ bookmark: "0000000b-00000005" }).bookmark()).toBe("bookmark-of-0000000b-00000005");
    expect(started).toEqual(["first-unconstrained", "first-primary", "0000000b-00000005"]);
  });
});
