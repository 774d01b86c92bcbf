/** Loans a steady load keeps in flight at most: a start that finds this many still unanswered is skipped (and counted). */
export const STEADY_IN_FLIGHT = 20;

/**
 * An open-loop load: `create` started every 1000/`rate` ms on a fixed schedule (a late tick does not
 * shift the next ones), whether or not earlier loans have answered, with at most STEADY_IN_FLIGHT
 * unanswered (a start beyond that is skipped and counted, so an overloaded stack shows as skips
 * rather than as an unbounded pile of requests). `stop` waits for the loans in flight.
 */
export function steadyLoans(rate: number, create: () => Promise<void>) {
  const period = 1000 / rate;
  const started = performance.now();
  const inFlight = new Set<Promise<void>>();
  let ticks = 0;
  let skipped = 0;
  let stopped = false;
  let failure: unknown;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const tick = () => {
    if (stopped) return;
    if (inFlight.size >= STEADY_IN_FLIGHT) skipped++;
    else {
      const p = create()
        .catch((err) => {
          failure ??= err;
        })
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
    ticks++;
    timer = setTimeout(tick, Math.max(0, started + ticks * period - performance.now()));
  };
  tick();
  return {
    skipped: () => skipped,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await Promise.all([...inFlight]);
      if (failure) throw failure;
    },
  };
}
