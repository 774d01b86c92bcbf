import type { SimStorage } from "./sim-storage.ts";

/**
 * The writes of one operation, over the stored state: reads see the pending
 * writes first. A fork holds the writes of an EVM call until it succeeds.
 * The engine stores `entries()` in one `put`, so an operation is applied
 * whole or not at all.
 */
export class WorkingState {
  private readonly writes = new Map<string, unknown>();

  constructor(
    private readonly storage: SimStorage,
    private readonly parent: WorkingState | null = null,
  ) {}

  async get<T>(k: string): Promise<T | undefined> {
    if (this.writes.has(k)) return this.writes.get(k) as T;
    return this.parent ? this.parent.get<T>(k) : this.storage.get<T>(k);
  }

  set(k: string, value: unknown): void {
    this.writes.set(k, value);
  }

  fork(): WorkingState {
    return new WorkingState(this.storage, this);
  }

  mergeIntoParent(): void {
    if (!this.parent) throw new Error("only a fork merges into its parent");
    for (const [k, v] of this.writes) this.parent.set(k, v);
  }

  /** Whether the operation wrote anything (reads and idempotent answers write nothing, so store nothing). */
  hasWrites(): boolean {
    return this.writes.size > 0;
  }

  entries(): Record<string, unknown> {
    return Object.fromEntries(this.writes);
  }
}
