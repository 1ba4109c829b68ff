import { randomUUID } from 'node:crypto';
import { healthPeriodStart, isCompatible, targetsDevice, type ArtifactSummary, type DecisionDeployment, type DecisionDevice } from '@ota/decision';

/**
 * How a device has run since it installed the build it runs, as its check reports it (docs/api.md,
 * "Device health"), and kept on the device with the build and the time of the check, so that the
 * next check can tell what happened in between.
 */
export interface HealthSnapshot {
  build: number;
  resetReason: string;
  boots: number;
  abnormalBoots: number;
  uptimeSeconds: number;
  minFreeHeap?: number;
  at: Date;
}

/** What happened between two of a device's checks: hours run and abnormal resets on the build it runs. */
export interface HealthIncrement {
  seconds: number;
  abnormalResets: number;
  /** The device installed the build since its check before: all it reported is new. */
  installed: boolean;
}

/** No device boots more often than this: a report of more abnormal boots in less time counts this many. */
const MIN_SECONDS_PER_BOOT = 1;

/**
 * The increment from the device's previous report to this one. On the same build it is the
 * difference; a counter that went down (the device lost its counts, or installed the same build
 * again) starts a new baseline and counts nothing. After an install, everything reported since it
 * is new. A device's first report is only a baseline: its counters may go back long before the
 * deployment.
 *
 * What a device reports is bounded by what the registry's clock saw, so that no device can blind
 * the guardrail or force it (docs/api.md, "Device health"): its hours by the time since its
 * previous report (an install came after that report, so the same holds for it), which also caps a
 * device's share of a side at what it can really have run, and makes a firmware that reports
 * milliseconds count no more than real time; its abnormal resets by its boots, and by one boot a
 * second. `timeScale` multiplies the registry's clock for a fleet simulated in compressed time
 * (HEALTH_TIME_SCALE; 1 in production).
 */
export function healthIncrement(previous: HealthSnapshot | null, current: HealthSnapshot, timeScale = 1): HealthIncrement | null {
  if (!previous) return null;
  const elapsed = (Math.max(0, current.at.getTime() - previous.at.getTime()) / 1000) * timeScale;
  const bounded = (seconds: number, abnormalResets: number, boots: number) => ({
    seconds: Math.min(seconds, elapsed),
    abnormalResets: Math.min(abnormalResets, boots, Math.floor(elapsed / MIN_SECONDS_PER_BOOT) + 1),
  });
  if (previous.build !== current.build) return { ...bounded(current.uptimeSeconds, current.abnormalBoots, current.boots), installed: true };
  if (current.boots < previous.boots || current.abnormalBoots < previous.abnormalBoots || current.uptimeSeconds < previous.uptimeSeconds) return null;
  return {
    ...bounded(current.uptimeSeconds - previous.uptimeSeconds, current.abnormalBoots - previous.abnormalBoots, current.boots - previous.boots),
    installed: false,
  };
}

export type HealthSide = 'updated' | 'previous';

/**
 * The sides a checking device counts on: for each active deployment that watches health and
 * targets a device its build fits, `updated` when the device runs the deployment's build, and
 * `previous` when it runs an earlier one (whether or not its cohort is admitted yet: the devices
 * left out are the comparison). A device on a later build counts on neither.
 */
export function healthSides(
  device: DecisionDevice,
  active: readonly DecisionDeployment[],
  artifactOf: (id: string) => ArtifactSummary | undefined,
): Array<{ deployment: DecisionDeployment; side: HealthSide }> {
  const sides: Array<{ deployment: DecisionDeployment; side: HealthSide }> = [];
  for (const deployment of active) {
    if (!deployment.watchesHealth || !targetsDevice(deployment, device)) continue;
    const artifact = artifactOf(deployment.artifactId);
    if (!artifact || !isCompatible(artifact, device)) continue;
    if (device.currentBuildNumber === artifact.buildNumber) sides.push({ deployment, side: 'updated' });
    else if (device.currentBuildNumber < artifact.buildNumber) sides.push({ deployment, side: 'previous' });
  }
  return sides;
}


export interface HealthTally {
  projectId: string;
  deploymentId: string;
  side: HealthSide;
  periodStart: Date;
  deviceSeconds: number;
  abnormalResets: number;
  /** Devices counted on the side for the first time (an install, or the first report since the start). */
  devices: number;
}

/**
 * What this replica's checks counted and rollout has not yet been sent: one tally per deployment,
 * side and period, however many checks, so that it stays small between flushes.
 */
export class HealthTallies {
  private pending = new Map<string, HealthTally>();

  /**
   * `source` names this replica in what it sends: rollout keeps each replica's counts apart (one
   * writer per document). `timeScale` is healthIncrement's (HEALTH_TIME_SCALE).
   */
  constructor(
    readonly source: string = randomUUID(),
    readonly timeScale = 1,
  ) {}

  /** Counts the device's increment on each side it is on. */
  count(sides: ReadonlyArray<{ deployment: DecisionDeployment; side: HealthSide }>, increment: HealthIncrement, previousAt: Date, at: Date): void {
    for (const { deployment, side } of sides) {
      // A device is counted once per side: when it installs the build, or at its first report
      // after the deployment started (its first report ever counts it in countFirstReport).
      const startedAt = deployment.startedAt?.getTime() ?? 0;
      const firstOnSide = (side === 'updated' && increment.installed) || previousAt.getTime() < startedAt;
      this.add({
        projectId: deployment.projectId,
        deploymentId: deployment.id,
        side,
        periodStart: healthPeriodStart(at),
        deviceSeconds: increment.seconds,
        abnormalResets: increment.abnormalResets,
        devices: firstOnSide ? 1 : 0,
      });
    }
  }

  /**
   * A device's first health report ever is only a baseline, but it is a device on the side: one
   * whose firmware began to report with the build the deployment installed would otherwise never be
   * counted, and the guardrail would wait for `min_devices` forever.
   */
  countFirstReport(sides: ReadonlyArray<{ deployment: DecisionDeployment; side: HealthSide }>, at: Date): void {
    for (const { deployment, side } of sides) {
      this.add({ projectId: deployment.projectId, deploymentId: deployment.id, side, periodStart: healthPeriodStart(at), deviceSeconds: 0, abnormalResets: 0, devices: 1 });
    }
  }

  add(tally: HealthTally): void {
    const key = `${tally.deploymentId}|${tally.side}|${tally.periodStart.getTime()}`;
    const held = this.pending.get(key);
    if (!held) {
      this.pending.set(key, { ...tally });
      return;
    }
    held.deviceSeconds += tally.deviceSeconds;
    held.abnormalResets += tally.abnormalResets;
    held.devices += tally.devices;
  }

  /** Everything counted so far, which is forgotten here: a caller that fails to send it adds it back. */
  take(): HealthTally[] {
    const taken = [...this.pending.values()];
    this.pending = new Map();
    return taken;
  }
}

/**
 * Sends what the checks counted to rollout every `intervalMs`; a send that fails is kept for the
 * next. Returns the stop, which sends what is left.
 */
export function flushHealthTallies(tallies: HealthTallies, intervalMs: number, send: (tallies: HealthTally[]) => Promise<void>, warn: (error: unknown) => void): () => Promise<void> {
  let running: Promise<void> = Promise.resolve();
  const flush = () => {
    running = running.then(async () => {
      const taken = tallies.take();
      if (taken.length === 0) return;
      try {
        await send(taken);
      } catch (error) {
        for (const tally of taken) tallies.add(tally);
        warn(error);
      }
    });
    return running;
  };
  const timer = setInterval(() => void flush(), intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await flush();
  };
}
