/**
 * Time is passed in, never read from `Date.now()` in domain code. A tenant's
 * clock is the system clock plus the offset of the mode it acts in: the
 * sandbox clock moves per tenant, and only sandbox loans run on it; live loans
 * always run on the system clock (`tenantClock(system, tenant, mode)`).
 */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock `offsetMs` ahead of `base`. */
export const offsetClock = (base: Clock, offsetMs: number): Clock => ({
  now: () => new Date(base.now().getTime() + offsetMs),
});

/** A clock that stands still until moved; for tests. */
export function fixedClock(start: Date): Clock & { advance(ms: number): void; set(d: Date): void } {
  let t = start.getTime();
  return {
    now: () => new Date(t),
    advance: (ms) => {
      t += ms;
    },
    set: (d) => {
      t = d.getTime();
    },
  };
}
