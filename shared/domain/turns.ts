/**
 * Work shared out in turns: when a job may take at most `max` of its items
 * per run (an invocation's subrequest budget), each run takes the next
 * `max` of them, wrapping around, so every item is reached every
 * ceil(items / max) runs however many there are, without any state: the run's
 * number (`turn`, e.g. the minute since the epoch) says where its window
 * starts. Items added or removed between runs shift the windows; an item is
 * then at most one cycle late. All of them when they fit.
 *
 * @example windowOfTurn(["a", "b", "c", "d", "e"], 2, 1) // ["c", "d"]
 * @example windowOfTurn(["a", "b", "c", "d", "e"], 2, 2) // ["e", "a"]
 */
export function windowOfTurn<T>(items: readonly T[], max: number, turn: number): T[] {
  if (items.length <= max) return [...items];
  const start = (((turn * max) % items.length) + items.length) % items.length;
  return Array.from({ length: max }, (_, i) => items[(start + i) % items.length]!);
}

/** The turn of a job that runs once a minute: the minute since the epoch. */
export const minuteTurn = (now: Date): number => Math.floor(now.getTime() / 60_000);
