import { expect, test } from "bun:test";
import { REQUESTS_AT_ONCE, type Slot, sendSlots, TENANT_SHARE } from "./send-slots.ts";

const a = (endpointId = "a1") => ({ tenantId: "A", endpointId });
const b = (endpointId = "b1") => ({ tenantId: "B", endpointId });
/** Whether a promise has settled, after pending callbacks ran. */
const settled = async (p: Promise<unknown>) => {
  let done = false;
  void p.then(() => (done = true));
  await Bun.sleep(1);
  return done;
};

test("at most six requests out at once: the seventh gets the first slot given back", async () => {
  const slots = sendSlots({ waitMs: 60_000, slowAfterMs: 60_000 });
  const held = await Promise.all(Array.from({ length: REQUESTS_AT_ONCE }, () => slots.take(a())));
  expect(held.every(Boolean)).toBe(true);
  const seventh = slots.take(a());
  expect(await settled(seventh)).toBe(false);
  held[0]!.done({ answered: true });
  expect(await seventh).toBeDefined();
});

test("one tenant alone may hold all six; once another asks, it gets the next free slots until the first holds no more than three", async () => {
  const slots = sendSlots({ waitMs: 60_000, slowAfterMs: 60_000 });
  const ofA = await Promise.all(Array.from({ length: REQUESTS_AT_ONCE }, () => slots.take(a())));
  const moreOfA = slots.take(a()); // asked first
  const ofB = [slots.take(b()), slots.take(b()), slots.take(b()), slots.take(b())];
  // A gives back three: each goes to B, which waited less than A's request but is under its share.
  for (const s of ofA.slice(0, 3)) s!.done({ answered: true });
  expect(await Promise.all(ofB.slice(0, 3).map(settled))).toEqual([true, true, true]);
  expect(await settled(moreOfA)).toBe(false); // A holds 3 = TENANT_SHARE
  expect(await settled(ofB[3]!)).toBe(false); // B holds 3 too
  // A gives back one more: A holds 2, so A's own waiting request (the older) is next.
  ofA[3]!.done({ answered: true });
  expect(await settled(moreOfA)).toBe(true);
  expect(await settled(ofB[3]!)).toBe(false);
  expect(TENANT_SHARE).toBe(3);
});

test("an endpoint slower than slowAfterMs (half the timeout) holds one slot while another endpoint's request waits; more only when a slot would stay idle", async () => {
  const slots = sendSlots({ waitMs: 60_000, slowAfterMs: 20 });
  const first = (await slots.take(a("slow")))!;
  await Bun.sleep(40); // out longer than 20 ms: the endpoint is slow
  const fast = (await Promise.all(Array.from({ length: 5 }, () => slots.take(a("fast"))))) as Slot[];
  const again = slots.take(a("slow")); // asked first
  const other = slots.take(a("other"));
  fast[0]!.done({ answered: true });
  expect(await settled(other)).toBe(true); // the slow endpoint already holds one
  expect(await settled(again)).toBe(false);
  fast[1]!.done({ answered: true });
  expect(await settled(again)).toBe(true); // no one else waits: the slot would stay idle
  first.done({ answered: true });
});

test("an endpoint that did not answer, or whose attempt is a retry, counts as slow", async () => {
  const slots = sendSlots({ waitMs: 60_000, slowAfterMs: 60_000 });
  (await slots.take(a("dead")))!.done({ answered: false });
  const others = ["C", "C", "D", "D"].map((tenantId, i) => slots.take({ tenantId, endpointId: `x${i}` }));
  const held = (await Promise.all([slots.take(a("dead")), slots.take({ ...b("flaky"), slow: true }), ...others])) as Slot[];
  const dead = slots.take(a("dead"));
  const flaky = slots.take(b("flaky"));
  const fresh = slots.take(b("fresh"));
  held[5]!.done({ answered: true });
  expect(await settled(fresh)).toBe(true);
  expect(await settled(dead)).toBe(false);
  expect(await settled(flaky)).toBe(false);
});

test("a request that waits longer than waitMs gets no slot (it is deferred), and a slot given back later skips it", async () => {
  const slots = sendSlots({ waitMs: 60_000, slowAfterMs: 60_000 });
  const held = (await Promise.all(Array.from({ length: REQUESTS_AT_ONCE }, () => slots.take(a())))) as Slot[];
  expect(await slots.take(a(), 20)).toBeUndefined();
  const next = slots.take(a(), 1_000);
  held[0]!.done({ answered: true });
  expect(await next).toBeDefined();
  // Given back twice: counted once (the sixth slot is still held by `next`).
  held[0]!.done({ answered: true });
  expect(await settled(slots.take(a(), 1_000))).toBe(false);
});

test("without a wait limit a request waits as long as it takes", async () => {
  const slots = sendSlots({ waitMs: 60_000, slowAfterMs: 60_000 });
  const held = (await Promise.all(Array.from({ length: REQUESTS_AT_ONCE }, () => slots.take(a())))) as Slot[];
  const patient = slots.take(b(), Number.POSITIVE_INFINITY);
  await Bun.sleep(30);
  expect(await settled(patient)).toBe(false);
  held[5]!.done({ answered: true });
  expect(await patient).toBeDefined();
});
