/**
 * True when a write failed on a UNIQUE constraint (optionally of one column).
 * D1 and libSQL word it the same way ("UNIQUE constraint failed: table.col");
 * drizzle may wrap the driver's error, so causes are followed.
 */
export function isUniqueViolation(err: unknown, column?: string): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const msg = e instanceof Error ? e.message : String(e);
    if (/UNIQUE constraint failed/i.test(msg) && (!column || msg.includes(column))) return true;
  }
  return false;
}

/** True when a write failed on a FOREIGN KEY constraint (D1 and libSQL word it the same way). */
export function isForeignKeyViolation(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const msg = e instanceof Error ? e.message : String(e);
    if (/FOREIGN KEY constraint failed/i.test(msg)) return true;
  }
  return false;
}
