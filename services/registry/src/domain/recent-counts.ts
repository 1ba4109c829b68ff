/**
 * Counts that may be a little old, per key: a count younger than the caller's `maxAgeMs` is
 * answered from memory; an older one is answered as it is while one fresh count runs behind it
 * (stale while it revalidates); a missing one is counted while the caller waits. Counting a large
 * fleet reads every device document on FerretDB, which a console polling a summary every few
 * seconds must not pay each time.
 */
export class RecentCounts<Count = number> {
  private readonly entries = new Map<string, { count: Count; at: number }>();
  /** Counts under way, one per key: callers, waiting or not, share it instead of counting again. */
  private readonly counting = new Map<string, Promise<Count>>();

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  async get(key: string, maxAgeMs: number, count: () => Promise<Count>): Promise<Count> {
    const entry = this.entries.get(key);
    if (entry && this.now() - entry.at <= maxAgeMs) return entry.count;
    const fresh = this.countOnce(key, count);
    if (!entry) return fresh;
    // Answered with the old count; a recount that fails is started again by the next caller.
    fresh.catch(() => undefined);
    return entry.count;
  }

  private countOnce(key: string, count: () => Promise<Count>): Promise<Count> {
    let under = this.counting.get(key);
    if (!under) {
      under = this.refresh(key, count).finally(() => this.counting.delete(key));
      this.counting.set(key, under);
    }
    return under;
  }

  private async refresh(key: string, count: () => Promise<Count>): Promise<Count> {
    const startedAt = this.now();
    const value = await count();
    this.entries.delete(key);
    this.entries.set(key, { count: value, at: startedAt });
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return value;
  }
}
