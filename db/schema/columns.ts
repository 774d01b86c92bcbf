import { customType, integer, text } from "drizzle-orm/sqlite-core";

/**
 * Money columns: SQLite INTEGER holding base units (10^-6), read back as bigint.
 * D1 and libSQL both return integers as JS numbers, exact up to 2^53 units
 * (9 billion coins), far beyond any pool this service runs.
 */
export const units = customType<{ data: bigint; driverData: number | bigint }>({
  dataType: () => "integer",
  toDriver: (value) => {
    if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < -BigInt(Number.MAX_SAFE_INTEGER)) {
      throw new RangeError("amount exceeds the safe integer range of the database");
    }
    return Number(value);
  },
  fromDriver: (value) => BigInt(value),
});

/** JSON stored as TEXT. */
export const json = <T>(name: string) => text(name, { mode: "json" }).$type<T>();

/** Milliseconds since the epoch, read back as Date. */
export const timestamp = (name: string) => integer(name, { mode: "timestamp_ms" });

export const bool = (name: string) => integer(name, { mode: "boolean" });
