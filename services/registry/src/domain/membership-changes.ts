import { randomUUID } from 'node:crypto';
import { invalidArgument, notFound } from '@ota/errors';
import type { Logger } from '@ota/logging';
import type { DeviceFilter } from './model';
import type { RegistryStore } from './ports';

/**
 * Bulk membership changes: every device of a project that matches a selection added to a group,
 * or taken out of it, as one operation (docs/api.md, "Bulk group changes").
 *
 * A change walks the project a few page buckets at a time (devicePageKeys in @ota/ids), so each
 * step reads and writes only the matches of one bucket, and stores how far it has come after every
 * few buckets. The replica that started it holds a lease on it and renews it with each bucket; when a
 * replica stops, another takes the change over from its last bucket once the lease has run out.
 * Each bucket's work can be repeated (adding a member twice or removing a non-member changes
 * nothing), so a bucket redone after a takeover changes what it would have changed once. When the
 * walk ends, one audit event says what changed; its id is the change's, so publishing it again
 * stores it once.
 */

export type MembershipAction = 'add' | 'remove';

/** The devices a change applies to: those that match every filter given. */
export type DeviceSelection = Pick<DeviceFilter, 'active' | 'groupId' | 'channelId' | 'chipFamily' | 'search'>;

/** The selection as the API and the store name its filters: only those given. */
export function selectionFields(matching: DeviceSelection): { active?: boolean; group_id?: string; channel_id?: string; chip_family?: string; search?: string } {
  return {
    ...(matching.active !== undefined ? { active: matching.active } : {}),
    ...(matching.groupId ? { group_id: matching.groupId } : {}),
    ...(matching.channelId ? { channel_id: matching.channelId } : {}),
    ...(matching.chipFamily ? { chip_family: matching.chipFamily } : {}),
    ...(matching.search ? { search: matching.search } : {}),
  };
}

export interface AuditActor {
  type: string;
  id: string;
  tokenPrefix: string;
  /** The role it acted with and how it signed in (docs/api.md, "Roles"); empty from a gateway of the release before. */
  role: string;
  via: string;
}

export interface MembershipChange {
  id: string;
  projectId: string;
  groupId: string;
  action: MembershipAction;
  matching: DeviceSelection;
  actor: AuditActor;
  state: 'running' | 'done' | 'failed';
  /** The bucket level walked: 16 ** level buckets. */
  level: number;
  bucketsDone: number;
  devicesMatched: number;
  added: number;
  removed: number;
  devicesExpected: number;
  createdAt: Date;
  finishedAt: Date | null;
  detail: string;
  audited: boolean;
}

/** What one bucket's step did. */
export interface BucketChange {
  matched: number;
  changed: number;
}

export interface MembershipChangeStore {
  insertChange(change: MembershipChange, runner: string, leaseUntil: Date): Promise<void>;
  findChange(id: string): Promise<MembershipChange | null>;
  /** Takes the running change for `runner` when no other replica holds a live lease on it; null when another does. */
  claimChange(id: string, runner: string, now: Date, leaseUntil: Date): Promise<MembershipChange | null>;
  /** Records the buckets done and renews the lease; false when the change is no longer this runner's. */
  saveProgress(change: MembershipChange, runner: string, leaseUntil: Date): Promise<boolean>;
  finishChange(change: MembershipChange, runner: string): Promise<boolean>;
  markAudited(id: string): Promise<void>;
  /** Running changes whose lease ran out, and finished ones whose audit event is not out yet. */
  changesToResume(now: Date): Promise<Array<{ id: string; state: MembershipChange['state'] }>>;
  /** Applies the change to the matches in the bucket of `prefix` (hex digits of the devices' UUIDs). */
  changeBucket(change: MembershipChange, prefix: string): Promise<BucketChange>;
}

export interface MembershipChangeOptions {
  registryStore: Pick<RegistryStore, 'findGroup' | 'countDevices' | 'readDevicePage'>;
  store: MembershipChangeStore;
  /** Publishes the change's one audit event; throws when it could not. */
  publishAudit: (change: MembershipChange) => Promise<void>;
  logger: Logger;
  /** How long a replica's claim on a change lasts without progress (MEMBERSHIP_CHANGE_LEASE_MS). */
  leaseMs: number;
  now?: () => Date;
}

/** Projects of at most this many devices are walked in 16 buckets; larger ones in 256. */
const SIXTEEN_BUCKETS_UP_TO = 16_000;
/**
 * Buckets changed at once. A step waits on the store in turn with each of its reads and writes, so
 * one bucket at a time left the two cores of the measured machine a third idle. Two at a time took
 * a change of 10,000 devices from 11.4 to 8.3 s; three, to 8.4 s, the cores then busy
 * (docs/performance.md, "Bulk changes two buckets at once, and from the memberships"). The
 * progress saved counts a window's buckets once all of them are done, so a replica that takes the
 * change over redoes at most this many.
 */
const BUCKETS_AT_ONCE = 2;
/** A bucket whose step fails is tried this many times before the change is given up as failed. */
const BUCKET_ATTEMPTS = 5;
const FIRST_RETRY_MS = 500;

export class MembershipChanges {
  /** This replica, as the runner named in the leases it takes. */
  readonly runner = randomUUID();
  private readonly running = new Set<string>();
  private readonly now: () => Date;
  private sweep: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly options: MembershipChangeOptions) {
    this.now = options.now ?? (() => new Date());
  }

  /** Starts the change and answers it as it begins; the walk goes on in the background. */
  async start(input: { projectId: string; groupId: string; action: string; matching: DeviceSelection; actor: AuditActor }): Promise<MembershipChange> {
    const { projectId, groupId, matching } = input;
    if (input.action !== 'add' && input.action !== 'remove') throw invalidArgument('action must be "add" or "remove"');
    const { registryStore } = this.options;
    if (!(await registryStore.findGroup(projectId, groupId))) throw notFound('group not found');
    if (matching.groupId && !(await registryStore.findGroup(projectId, matching.groupId))) throw notFound('the group of the selection was not found');
    const [project, expected] = await Promise.all([
      registryStore.countDevices(projectId),
      registryStore.readDevicePage(projectId, input.action === 'remove' ? { ...matching, groupId: matching.groupId ?? groupId } : matching, { limit: 1 }),
    ]);
    const at = this.now();
    const change: MembershipChange = {
      id: randomUUID(),
      projectId,
      groupId,
      action: input.action,
      matching,
      actor: input.actor,
      state: 'running',
      level: project.count <= SIXTEEN_BUCKETS_UP_TO ? 1 : 2,
      bucketsDone: 0,
      devicesMatched: 0,
      added: 0,
      removed: 0,
      devicesExpected: expected.total.count,
      createdAt: at,
      finishedAt: null,
      detail: '',
      audited: false,
    };
    await this.options.store.insertChange(change, this.runner, this.leaseFrom(at));
    this.running.add(change.id);
    void this.walk(change);
    return change;
  }

  async get(projectId: string, groupId: string, id: string): Promise<MembershipChange> {
    const change = await this.options.store.findChange(id);
    if (!change || change.projectId !== projectId || change.groupId !== groupId) throw notFound('membership change not found');
    return change;
  }

  /** Looks every `intervalMs` for changes no replica runs any more, and for audit events still to publish. */
  startSweeping(intervalMs: number): void {
    this.sweep = setInterval(() => void this.resumeAbandoned(), intervalMs);
    this.sweep.unref();
    void this.resumeAbandoned();
  }

  /** Stops sweeping and walking; a change this replica was running is taken over when its lease runs out. */
  stop(): void {
    this.stopped = true;
    clearInterval(this.sweep);
  }

  /** Resumes each running change whose lease ran out, and publishes the audit events left behind. */
  async resumeAbandoned(): Promise<void> {
    try {
      const now = this.now();
      for (const { id, state } of await this.options.store.changesToResume(now)) {
        if (this.running.has(id)) continue;
        if (state !== 'running') {
          const change = await this.options.store.findChange(id);
          if (change) await this.audit(change);
          continue;
        }
        const claimed = await this.options.store.claimChange(id, this.runner, now, this.leaseFrom(now));
        if (!claimed) continue;
        this.options.logger.info({ changeId: id, bucketsDone: claimed.bucketsDone }, 'taking over a membership change another replica left');
        this.running.add(id);
        void this.walk(claimed);
      }
    } catch (error) {
      this.options.logger.warn({ err: error }, 'could not look for membership changes to resume; trying again at the next sweep');
    }
  }

  private async walk(change: MembershipChange): Promise<void> {
    const { store, logger } = this.options;
    try {
      const buckets = 16 ** change.level;
      while (change.bucketsDone < buckets) {
        if (this.stopped) return;
        const window = Array.from({ length: Math.min(BUCKETS_AT_ONCE, buckets - change.bucketsDone) }, (_, offset) => change.bucketsDone + offset);
        // Every step of the window ends before the walk goes on or gives up, so nothing writes after the change has ended.
        const settled = await Promise.allSettled(window.map((bucket) => this.withRetries(() => store.changeBucket(change, bucket.toString(16).padStart(change.level, '0')))));
        const failure = settled.find((result) => result.status === 'rejected');
        if (failure) throw failure.reason;
        for (const step of settled.map((result) => (result as PromiseFulfilledResult<BucketChange>).value)) {
          change.devicesMatched += step.matched;
          if (change.action === 'add') change.added += step.changed;
          else change.removed += step.changed;
        }
        change.bucketsDone += window.length;
        if (!(await this.withRetries(() => store.saveProgress(change, this.runner, this.leaseFrom(this.now()))))) {
          logger.warn({ changeId: change.id }, 'another replica took this membership change over; leaving it to that one');
          return;
        }
      }
      change.state = 'done';
    } catch (error) {
      logger.error({ err: error, changeId: change.id, bucketsDone: change.bucketsDone }, 'a membership change failed; what it changed before stays changed');
      change.state = 'failed';
      change.detail = `the change stopped after ${change.bucketsDone} of ${16 ** change.level} parts of the project: ${error instanceof Error ? error.message : String(error)}`;
    } finally {
      this.running.delete(change.id);
    }
    if (this.stopped && change.state === 'failed') return;
    change.finishedAt = this.now();
    try {
      if (await store.finishChange(change, this.runner)) await this.audit(change);
    } catch (error) {
      // The lease runs out and the sweep of some replica finishes the change from its last bucket.
      logger.warn({ err: error, changeId: change.id }, 'could not record the end of a membership change; a sweep will finish it');
    }
  }

  private async audit(change: MembershipChange): Promise<void> {
    try {
      await this.options.publishAudit(change);
      await this.options.store.markAudited(change.id);
    } catch (error) {
      this.options.logger.warn({ err: error, changeId: change.id }, 'the audit event of a membership change is not out yet; a sweep will publish it');
    }
  }

  /** A store that blinks (a failover, a dropped connection) costs a retry, not the change. */
  private async withRetries<T>(step: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await step();
      } catch (error) {
        if (attempt >= BUCKET_ATTEMPTS) throw error;
        await new Promise((resolve) => setTimeout(resolve, FIRST_RETRY_MS * 2 ** (attempt - 1)));
      }
    }
  }

  private leaseFrom(at: Date): Date {
    return new Date(at.getTime() + this.options.leaseMs);
  }
}
