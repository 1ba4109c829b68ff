/**
 * Which builds a project's devices run, now and as it was (docs/api.md, "Fleet builds"): counted
 * from each active device's `current_build_number`, for the whole project, one channel or one
 * group. Counts of the past are snapshots one replica takes each period.
 */

export interface BuildCount {
  buildNumber: number;
  devices: number;
}

export type FleetScope = { kind: 'project' } | { kind: 'channel'; id: string } | { kind: 'group'; id: string };

export interface FleetSnapshot {
  projectId: string;
  scope: FleetScope;
  /** The start of the period it was taken in. */
  at: Date;
  builds: BuildCount[];
}

export interface FleetBuildStore {
  /** Whether the channel or group is one of the project's (the project itself always is). */
  scopeExists(projectId: string, scope: FleetScope): Promise<boolean>;
  /** The active devices of the scope per build they run, now; builds with no device left out. */
  countBuilds(projectId: string, scope: FleetScope): Promise<BuildCount[]>;
  /** Every project with its channels and groups, for a round of snapshots. */
  projectsWithScopes(): Promise<Array<{ projectId: string; channelIds: string[]; groupIds: string[] }>>;
  /** Takes the period's round for the project; false when another replica took it first. */
  claimPeriod(projectId: string, at: Date): Promise<boolean>;
  saveSnapshot(snapshot: FleetSnapshot): Promise<void>;
  /** The scope's snapshots from `since` up to `until`, oldest first. */
  snapshots(projectId: string, scope: FleetScope, since: Date, until: Date): Promise<FleetSnapshot[]>;
  /** Forgets the project's snapshots and claims older than `before`. */
  forgetBefore(projectId: string, before: Date): Promise<void>;
}

export interface FleetSnapshotSettings {
  /** FLEET_SNAPSHOT_MINUTES: the period of the snapshots. */
  periodMinutes: number;
  /** FLEET_SNAPSHOT_RETENTION_DAYS: how long a snapshot is kept. */
  retentionDays: number;
}

/** The start of the period `at` falls in: periods are aligned to the epoch, so replicas agree on them. */
export function periodStart(at: Date, periodMinutes: number): Date {
  const periodMs = periodMinutes * 60_000;
  return new Date(Math.floor(at.getTime() / periodMs) * periodMs);
}

/**
 * Takes each project's snapshots once per period, in whichever replica claims the project's period
 * first. A replica that stops during its round leaves that period without some snapshots: the chart
 * shows a gap there, never a wrong count.
 */
export class FleetSnapshots {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** The period this replica went through every project in: the next round waits for the next period. */
  private roundDone = -1;

  constructor(
    private readonly store: FleetBuildStore,
    private readonly settings: FleetSnapshotSettings,
    private readonly warn: (error: unknown, message: string) => void,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** One round: each project's snapshots of the current period not yet taken, and its old ones forgotten. Answers how many projects it took. */
  async takeDue(): Promise<number> {
    const now = this.now();
    const at = periodStart(now, this.settings.periodMinutes);
    if (at.getTime() === this.roundDone) return 0;
    let taken = 0;
    for (const { projectId, channelIds, groupIds } of await this.store.projectsWithScopes()) {
      if (!(await this.store.claimPeriod(projectId, at))) continue;
      const scopes: FleetScope[] = [{ kind: 'project' }, ...channelIds.map((id) => ({ kind: 'channel' as const, id })), ...groupIds.map((id) => ({ kind: 'group' as const, id }))];
      for (const scope of scopes) await this.store.saveSnapshot({ projectId, scope, at, builds: await this.store.countBuilds(projectId, scope) });
      await this.store.forgetBefore(projectId, new Date(now.getTime() - this.settings.retentionDays * 86_400_000));
      taken += 1;
    }
    this.roundDone = at.getTime();
    return taken;
  }

  /** Looks for a due round every minute (a round already running is not started twice). */
  start(): void {
    const round = () => {
      this.running ??= this.takeDue()
        .then(() => undefined)
        .catch((error) => this.warn(error, 'fleet snapshots not taken; the next round tries again'))
        .finally(() => (this.running = undefined));
    };
    this.timer = setInterval(round, 60_000);
    this.timer.unref();
    round();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
