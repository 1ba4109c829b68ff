/**
 * Runs work per key so that a burst of calls costs at most two runs at a time: the one in flight
 * and one queued after it, which every later caller shares. Each caller's promise settles with a
 * run that began after its call, so no caller acts on figures older than its own event.
 */
export class CoalescedRuns<T> {
  private readonly inFlight = new Map<string, Promise<T>>();
  private readonly queued = new Map<string, Promise<T>>();

  run(key: string, work: () => Promise<T>): Promise<T> {
    const queued = this.queued.get(key);
    if (queued) return queued;
    const current = this.inFlight.get(key);
    if (!current) return this.start(key, work);
    const next = current
      .catch(() => undefined)
      .then(() => {
        this.queued.delete(key);
        return this.start(key, work);
      });
    this.queued.set(key, next);
    return next;
  }

  private start(key: string, work: () => Promise<T>): Promise<T> {
    const running: Promise<T> = work().finally(() => {
      if (this.inFlight.get(key) === running) this.inFlight.delete(key);
    });
    this.inFlight.set(key, running);
    return running;
  }
}
