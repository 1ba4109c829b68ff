import type { StatusCountStore } from './ports';
import type { CountedStep } from './status-counts';
import { countChange, PendingCountDeltas, secondOf, type CountDelta, type StatusCounts } from './status-counts';

/**
 * How long after an event it is surely stored, and its count change flushed: compactions and
 * recounts cut this far behind the present, so that no write still in flight lands behind the cut.
 */
export const COUNT_SETTLE_MS = 5_000;

export interface DeploymentCountSettings {
  store: StatusCountStore;
  /** How often a deployment whose counts keep changing is counted afresh from its events. */
  recountIntervalMs: number;
  now: () => Date;
  warn: (error: unknown, message: string) => void;
}

/**
 * A deployment's devices per status and failures per reason, kept as reports arrive so that the
 * summary reads a snapshot and a few deltas instead of counting every device (docs/performance.md,
 * "The deployment summary"). This replica's changes are written every flush as insert-only deltas;
 * `maintain` folds them into snapshots and, now and then, recounts from the events, which corrects
 * what racing replicas or a crash between an event and its flush got wrong.
 */
export class DeploymentCounts {
  private readonly pending = new PendingCountDeltas();
  private readonly writes = new Set<Promise<void>>();
  /** Deployments this replica wrote deltas for, with when it last did: the ones it compacts. */
  private readonly counted = new Map<string, Date>();
  /** Deployments to recount at the next maintenance: they ended, or a device of theirs was deleted. */
  private readonly recountSoon = new Set<string>();
  /** First counts of deployments from before the counts existed, which concurrent readers share. */
  private readonly firstCounts = new Map<string, Promise<void>>();

  constructor(private readonly settings: DeploymentCountSettings) {}

  start(deploymentId: string, at: Date): Promise<void> {
    return this.settings.store.startCounts(deploymentId, at);
  }

  /** Counts one stored event and the step it took (see `countChange`); it reaches the store with the next flush. */
  eventStored(deploymentId: string, at: Date, event: { status: string; reason: string; newlyStored: boolean }, step: Pick<CountedStep, 'from' | 'to'> | null): void {
    this.pending.add(deploymentId, at, countChange(event, step));
  }

  recountLater(deploymentId: string): void {
    this.recountSoon.add(deploymentId);
  }

  /** Writes every pending change, and waits for the writes already under way. */
  async flush(): Promise<void> {
    for (const delta of this.pending.take()) this.write(delta);
    const failed = (await Promise.allSettled(this.writes)).find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
  }

  private write(delta: CountDelta): void {
    this.counted.set(delta.deploymentId, this.settings.now());
    const write = this.settings.store.insertDelta(delta).then(
      () => {
        this.writes.delete(write);
      },
      (error: unknown) => {
        this.writes.delete(write);
        // Kept for the next flush: a delta is written exactly once, or not at all.
        this.pending.restore([delta]);
        throw error;
      },
    );
    this.writes.add(write);
  }

  /**
   * The counts as of now, this replica's latest reports included (other replicas' arrive within
   * their flush interval). A deployment counted before these counts existed is counted once here.
   */
  async read(deploymentId: string): Promise<StatusCounts> {
    await this.flush();
    const stored = await this.settings.store.readCounts(deploymentId);
    if (stored) return stored.counts;
    // A large deployment takes a while to count: a console polling meanwhile waits for this count, not a count of its own.
    let first = this.firstCounts.get(deploymentId);
    if (!first) {
      first = this.settings.store
        .recount(deploymentId, secondOf(this.settings.now()), this.settings.now())
        .then(() => undefined)
        .finally(() => this.firstCounts.delete(deploymentId));
      this.firstCounts.set(deploymentId, first);
    }
    await first;
    const counted = await this.settings.store.readCounts(deploymentId);
    if (!counted) throw new Error(`deployment ${deploymentId} could not be counted`);
    return counted.counts;
  }

  /** One round of upkeep, on a timer: flush, compact what this replica counted, recount what is due. */
  async maintain(): Promise<void> {
    await this.flush().catch((error: unknown) => this.settings.warn(error, 'writing deployment count changes failed; the next flush tries again'));
    const now = this.settings.now();
    const cutoff = new Date(secondOf(now).getTime() - COUNT_SETTLE_MS);
    for (const deploymentId of new Set([...this.counted.keys(), ...this.recountSoon])) {
      try {
        const snapshot = await this.settings.store.compact(deploymentId, cutoff);
        if (snapshot && (this.recountSoon.has(deploymentId) || now.getTime() - snapshot.recountedAt.getTime() >= this.settings.recountIntervalMs)) {
          await this.settings.store.recount(deploymentId, cutoff, now);
        }
        this.recountSoon.delete(deploymentId);
        // Every delta it wrote is folded in: nothing left to compact until it counts again.
        if ((this.counted.get(deploymentId)?.getTime() ?? 0) < cutoff.getTime()) this.counted.delete(deploymentId);
      } catch (error) {
        this.settings.warn(error, `compacting the counts of deployment ${deploymentId} failed; the next round tries again`);
      }
    }
  }
}
