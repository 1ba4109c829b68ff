/**
 * When to trim a device's stored reports. Trimming reads the device's reports to find the ones
 * beyond the newest `keep`, which costs more than the report itself; doing it on every `every`-th
 * report of a device instead of on each leaves at most `keep + every - 1` stored, while the
 * listing never shows more than `keep`. A device this replica does not know yet (first report
 * since start, or forgotten beyond `maxDevices`) is trimmed at once, so that restarts cannot
 * pile reports up.
 */
export class ReportTrimSchedule {
  private readonly sinceTrim = new Map<string, number>();

  constructor(
    private readonly every: number,
    private readonly maxDevices: number,
  ) {}

  /** Counts a stored report of the device and says whether its reports are to be trimmed now. */
  due(deviceId: string): boolean {
    const count = this.sinceTrim.get(deviceId);
    // Re-inserting moves the key to the end: the oldest-used device is forgotten first.
    this.sinceTrim.delete(deviceId);
    const next = count === undefined ? 0 : (count + 1) % this.every;
    this.sinceTrim.set(deviceId, next);
    if (this.sinceTrim.size > this.maxDevices) this.sinceTrim.delete(this.sinceTrim.keys().next().value!);
    return next === 0;
  }
}
