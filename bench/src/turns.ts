/**
 * Lets the runs of a comparison share the machine one stretch at a time: whoever holds the turn
 * runs alone, and passes it at each measured step, so that the two sides' steps alternate and a
 * machine that slows down part way through slows both alike. Waiters are served in order.
 */
export class Turns {
  private held = false;
  private readonly waiting: (() => void)[] = [];

  /** Resolves once this caller holds the turn. */
  async take(): Promise<void> {
    if (!this.held) {
      this.held = true;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  /** Hands the turn to the next waiter, or frees it. */
  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.held = false;
  }

  /** Lets a waiting run take its step, and waits for the turn to come back. */
  async pass(): Promise<void> {
    if (this.waiting.length === 0) return;
    this.release();
    await this.take();
  }
}
