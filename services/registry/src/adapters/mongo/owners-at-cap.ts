/** The shortest time an owner found at its device cap is refused from memory. */
export const AT_CAP_MEMORY_MS = 10_000;
/** And at least this many times the read that found it: refusals then hold the store at most a twentieth of the time. */
const AT_CAP_MEMORY_PER_READ = 20;
/** Owners remembered at most; past this the memory starts again empty (it only ever saves reads). */
const MOST_OWNERS = 10_000;

/**
 * Owners this replica found at their device cap. Deciding that a cap is reached reads every place
 * the owner holds (takePlace, @ota/mongo), and a device refused keeps checking in: each of its
 * checks would read them all again. So a refusal is remembered for a while, and a device that
 * registers meanwhile is refused without a read. A place given back on this replica forgets the
 * owner at once; one given back on another replica is taken once the memory lapses.
 */
export class OwnersAtCap {
  private readonly owners = new Map<string, { cap: number; until: number }>();
  /** Per owner, one devices' take in flight that later devices' checks wait for. */
  private readonly takesInFlight = new Map<string, Promise<unknown>>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * A device's own registration's place: null when the owner is at `cap`, found from memory or by
   * `take`. Checks that arrive while one is taking for the same owner wait for it first, so that
   * when it finds the cap reached (a read of every place, seconds for a huge owner) the rest are
   * refused from memory instead of each making that read. They wait for one take, not a queue:
   * under the cap they then take at once, together.
   */
  async takeForCheck(ownerId: string, cap: number, take: () => Promise<number | null>): Promise<number | null> {
    const ahead = this.takesInFlight.get(ownerId);
    if (ahead) await ahead;
    if (this.holds(ownerId, cap)) return null;
    const started = performance.now();
    const taking = take();
    if (!this.takesInFlight.has(ownerId)) {
      const settled = taking.then(
        () => undefined,
        () => undefined,
      );
      this.takesInFlight.set(ownerId, settled);
      void settled.then(() => {
        if (this.takesInFlight.get(ownerId) === settled) this.takesInFlight.delete(ownerId);
      });
    }
    const place = await taking;
    if (place === null) this.found(ownerId, cap, performance.now() - started);
    return place;
  }

  /** True when the owner was found holding at least `cap` places, and that is recent enough to go by. */
  holds(ownerId: string, cap: number): boolean {
    const found = this.owners.get(ownerId);
    if (!found) return false;
    if (found.until <= this.now()) {
      this.owners.delete(ownerId);
      return false;
    }
    return cap <= found.cap;
  }

  /** The owner holds `cap` places or more, as a read that took `readMs` found. */
  found(ownerId: string, cap: number, readMs: number): void {
    if (this.owners.size >= MOST_OWNERS) this.owners.clear();
    this.owners.set(ownerId, { cap, until: this.now() + Math.max(AT_CAP_MEMORY_MS, readMs * AT_CAP_MEMORY_PER_READ) });
  }

  forget(ownerId: string): void {
    this.owners.delete(ownerId);
  }
}
