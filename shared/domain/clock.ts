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

/**
 * `now`, or 1 ms after `previous` when `now` is not later: the time of a
 * change that must come strictly after an earlier one of the same loan (its
 * events then sort by `createdAt` in the order they were made), however
 * coarse the clock or fast the path.
 */
export const strictlyAfter = (now: Date, previous: Date): Date => (now.getTime() > previous.getTime() ? now : new Date(previous.getTime() + 1));
