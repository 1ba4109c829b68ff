import { createHash } from 'node:crypto';

/** What a device's check reports of how it has run since it installed its build (docs/api.md, "Device health"). */
export interface HealthReport {
  reset_reason: string;
  boots: number;
  abnormal_boots: number;
  uptime_seconds: number;
  min_free_heap: number;
}

export interface FleetHealthOptions {
  /** Seeds the devices' resets, so that a run can be repeated. */
  seed: string;
  /** Abnormal resets per device-hour of a healthy build (a crash or a watchdog now and then). */
  abnormalPerHour: number;
  /** Builds that crash-loop: each of their devices panics once every this many hours. */
  crashLoops?: ReadonlyMap<number, number>;
}

interface DeviceHealth {
  build: number;
  boots: number;
  abnormalBoots: number;
  uptimeSeconds: number;
  resetReason: string;
  /** Hours since the device's last crash of a crash-looping build, toward the next. */
  sinceCrash: number;
}

/**
 * How each simulated device runs, in simulated time: `advance` runs the whole fleet for some hours,
 * in which healthy builds reset abnormally at random (Poisson, at `abnormalPerHour`) and a
 * crash-looping build panics on a period from a random phase; `installed` starts a device's counts
 * afresh on a new build, as the C client does after it confirms one.
 */
export class FleetHealth {
  private readonly devices = new Map<string, DeviceHealth>();
  /** Simulated hours run so far. */
  private hours = 0;

  constructor(private readonly options: FleetHealthOptions) {}

  /** The report a device's check carries; a device seen for the first time has run a day on `build`. */
  reportOf(deviceId: string, build: number): HealthReport {
    const device = this.deviceOf(deviceId, build);
    return {
      reset_reason: device.resetReason,
      boots: device.boots,
      abnormal_boots: device.abnormalBoots,
      uptime_seconds: device.uptimeSeconds,
      min_free_heap: 180_000,
    };
  }

  installed(deviceId: string, build: number): void {
    const phase = uniform(this.options.seed, deviceId, 'phase', String(build)) * (this.options.crashLoops?.get(build) ?? 0);
    this.devices.set(deviceId, { build, boots: 1, abnormalBoots: 0, uptimeSeconds: 0, resetReason: 'software', sinceCrash: phase });
  }

  /** Runs every known device for `hours`. */
  advance(hours: number): void {
    this.hours += hours;
    for (const [deviceId, device] of this.devices) {
      device.uptimeSeconds += hours * 3600;
      const period = this.options.crashLoops?.get(device.build);
      let crashes = poissonAt(this.options.abnormalPerHour * hours, uniform(this.options.seed, deviceId, String(this.hours)));
      if (period) {
        device.sinceCrash += hours;
        crashes += Math.floor(device.sinceCrash / period);
        device.sinceCrash %= period;
      }
      if (crashes > 0) {
        device.boots += crashes;
        device.abnormalBoots += crashes;
        device.resetReason = period ? 'panic' : 'task_watchdog';
      }
    }
  }

  private deviceOf(deviceId: string, build: number): DeviceHealth {
    let device = this.devices.get(deviceId);
    if (!device) {
      device = { build, boots: 1, abnormalBoots: 0, uptimeSeconds: 24 * 3600, resetReason: 'power_on', sinceCrash: 0 };
      this.devices.set(deviceId, device);
    }
    return device;
  }
}

/** A number in [0, 1) that follows from the words alone: each device's hours draw their own, in whatever order the fleet runs. */
function uniform(...words: string[]): number {
  const hash = createHash('sha256');
  for (const word of words) hash.update(word).update('\0');
  return hash.digest().readUInt32LE(0) / 2 ** 32;
}

/** The Poisson count of mean `mean` at quantile `u` (the inverse of its distribution function). */
function poissonAt(mean: number, u: number): number {
  let count = 0;
  let term = Math.exp(-mean);
  let cumulative = term;
  while (u > cumulative && term > 0) {
    count += 1;
    term *= mean / count;
    cumulative += term;
  }
  return count;
}
