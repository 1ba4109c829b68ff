// Maintenance windows (docs/api.md, "Maintenance windows"): weekly times at which a deployment may
// offer its build, in a named time zone or in the device's own local time. Outside them the check
// offers nothing and tells the device when the next one opens.

import { invalidArgument } from '@ota/errors';

export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** A window that opens on each of `days` at `start` (local `HH:MM`) and stays open `durationMinutes` of real time. */
export interface WeeklyWindow {
  days: readonly Weekday[];
  start: string;
  durationMinutes: number;
}

/**
 * Where the windows' local times are read: an IANA time zone, or each device's own offset from UTC
 * where the device reports one (`timeZone` then serves the devices that do not).
 */
export interface MaintenanceSchedule {
  windows: readonly WeeklyWindow[];
  timeZone: string;
  inDeviceLocalTime: boolean;
}

/**
 * A schedule as it travels between services (rollout's `MaintenanceSchedule` message, whose days
 * are plain strings): rollout validated it when the deployment was created, and a schedule it
 * receives is validated by validMaintenanceSchedule before it is stored.
 */
export function scheduleOfMessage(message: { timeZone: string; inDeviceLocalTime: boolean; windows: ReadonlyArray<{ days: readonly string[]; start: string; durationMinutes: number }> }): MaintenanceSchedule {
  return {
    timeZone: message.timeZone,
    inDeviceLocalTime: message.inDeviceLocalTime,
    windows: message.windows.map((window) => ({ days: window.days as Weekday[], start: window.start, durationMinutes: window.durationMinutes })),
  };
}

/** The most windows one schedule holds. */
export const MAX_WINDOWS = 20;

/**
 * The schedule, or InvalidArgument naming the first field that makes no sense, in the API's names
 * (`maintenance_windows…`): an unknown zone, a time not `HH:MM`, no day, a day twice, a length out
 * of range, or no window at all (leaving the schedule out offers at any time).
 */
export function validMaintenanceSchedule(schedule: MaintenanceSchedule): MaintenanceSchedule {
  const field = 'maintenance_windows';
  if (!isKnownTimeZone(schedule.timeZone)) throw invalidArgument(`${field}.time_zone names no time zone this service knows: ${JSON.stringify(schedule.timeZone)} (an IANA name such as Europe/Berlin, or UTC)`);
  if (schedule.windows.length === 0) throw invalidArgument(`${field}.windows holds no window: leave maintenance_windows out to offer at any time`);
  if (schedule.windows.length > MAX_WINDOWS) throw invalidArgument(`${field}.windows holds at most ${MAX_WINDOWS} windows`);
  schedule.windows.forEach((window, index) => {
    const at = `${field}.windows[${index}]`;
    if (!parseLocalTime(window.start)) throw invalidArgument(`${at}.start must be a local time HH:MM from 00:00 to 23:59`);
    if (window.days.length === 0) throw invalidArgument(`${at}.days names no day`);
    const unknown = window.days.find((day) => !WEEKDAYS.includes(day));
    if (unknown !== undefined) throw invalidArgument(`${at}.days names ${JSON.stringify(unknown)}: days are ${WEEKDAYS.join(', ')}`);
    if (new Set(window.days).size !== window.days.length) throw invalidArgument(`${at}.days names a day twice`);
    if (!Number.isInteger(window.durationMinutes) || window.durationMinutes < 1 || window.durationMinutes > MAX_WINDOW_MINUTES) {
      throw invalidArgument(`${at}.duration_minutes must be an integer from 1 to ${MAX_WINDOW_MINUTES}`);
    }
  });
  return { ...schedule, timeZone: canonicalTimeZone(schedule.timeZone) };
}

/**
 * The zone's canonical IANA name, as the time zone database resolves it: `europe/berlin` is
 * `Europe/Berlin`, and an alias its current name (`US/Pacific-New` is `America/Los_Angeles`), so
 * that a schedule reads back as the zone it is in, spelled one way.
 */
export function canonicalTimeZone(timeZone: string): string {
  return new Intl.DateTimeFormat('en', { timeZone }).resolvedOptions().timeZone;
}

export type WindowState = { open: true; closesAt: Date } | { open: false; opensAt: Date };

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;
/** The longest a window may last: a week, so that one window is never open across its own next opening. */
export const MAX_WINDOW_MINUTES = 7 * 24 * 60;

/** `HH:MM` on a 24-hour clock, 00:00 to 23:59. */
export function parseLocalTime(text: string): { hour: number; minute: number } | undefined {
  const match = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(text);
  return match ? { hour: Number(match[1]), minute: Number(match[2]) } : undefined;
}

/** Whether `timeZone` names a zone this runtime knows (an IANA name such as `Europe/Berlin`, or `UTC`). */
export function isKnownTimeZone(timeZone: string): boolean {
  try {
    partsFormatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether the schedule is open at `at`, and when it closes or next opens. `deviceOffsetMinutes` is
 * the device's reported offset from UTC (east positive), used when the schedule is in device local
 * time. A schedule without windows is always open.
 */
export function windowStateAt(schedule: MaintenanceSchedule, at: Date, deviceOffsetMinutes?: number): WindowState {
  if (schedule.windows.length === 0) return { open: true, closesAt: new Date(8.64e15) };
  const offset = schedule.inDeviceLocalTime ? deviceOffsetMinutes : undefined;
  // A state holds until the window closes or opens, for every device on the same clock: the check
  // reads it from here, not from the zone's rules, until then.
  const known = rememberedFor(schedule);
  const key = offset ?? 'zone';
  const now = at.getTime();
  const held = known.get(key);
  if (held && held.from <= now && now < held.until) return held.state;
  const state = computeState(schedule, now, offset);
  known.set(key, { state, from: now, until: (state.open ? state.closesAt : state.opensAt).getTime() });
  return state;
}

const remembered = new WeakMap<MaintenanceSchedule, Map<number | 'zone', { state: WindowState; from: number; until: number }>>();

function rememberedFor(schedule: MaintenanceSchedule) {
  let known = remembered.get(schedule);
  if (!known) {
    known = new Map();
    remembered.set(schedule, known);
  }
  return known;
}

function computeState(schedule: MaintenanceSchedule, now: number, deviceOffsetMinutes: number | undefined): WindowState {
  const clock: LocalClock = deviceOffsetMinutes !== undefined ? fixedOffsetClock(deviceOffsetMinutes) : zoneClock(schedule.timeZone);
  // Every opening from eight days before `at` (a window lasts at most a week) to eight days after.
  const today = clock.localDay(now);
  let closesAt = -Infinity;
  let opensAt = Infinity;
  for (let day = today - 8; day <= today + 8; day += 1) {
    const weekday = WEEKDAYS[((day % 7) + 4 + 7) % 7]!; // day 0 of the epoch was a Thursday
    for (const window of schedule.windows) {
      if (!window.days.includes(weekday)) continue;
      const { hour, minute } = parseLocalTime(window.start)!;
      const opening = clock.instantOf(day, hour * 60 + minute);
      const closing = opening + window.durationMinutes * MINUTE_MS;
      if (opening <= now && now < closing) closesAt = Math.max(closesAt, closing);
      else if (opening > now) opensAt = Math.min(opensAt, opening);
    }
  }
  if (closesAt > now) return { open: true, closesAt: new Date(closesAt) };
  return { open: false, opensAt: new Date(opensAt) };
}

/** Local days (days since the epoch in local time) and the instant of a local minute of one. */
interface LocalClock {
  localDay(instant: number): number;
  instantOf(localDay: number, minuteOfDay: number): number;
}

function fixedOffsetClock(offsetMinutes: number): LocalClock {
  const offset = offsetMinutes * MINUTE_MS;
  return {
    localDay: (instant) => Math.floor((instant + offset) / DAY_MS),
    instantOf: (localDay, minuteOfDay) => localDay * DAY_MS + minuteOfDay * MINUTE_MS - offset,
  };
}

const clocks = new Map<string, LocalClock>();

/**
 * A named zone's clock. A local time the change to summer time skips is read with the offset
 * before the change, so it falls as far after the jump as it was into the skipped hour (02:30
 * opens at 03:30); a local time the change back repeats is its first occurrence.
 */
function zoneClock(timeZone: string): LocalClock {
  const known = clocks.get(timeZone);
  if (known) return known;
  const offsetAt = (instant: number) => {
    const wall = wallClockOf(timeZone, instant);
    return wall - Math.floor(instant / 1000) * 1000;
  };
  const clock: LocalClock = {
    localDay: (instant) => Math.floor(wallClockOf(timeZone, instant) / DAY_MS),
    instantOf: (localDay, minuteOfDay) => {
      const wall = localDay * DAY_MS + minuteOfDay * MINUTE_MS;
      // The offsets a day either side hold every offset the zone can have at that wall time.
      const candidates = [offsetAt(wall - DAY_MS), offsetAt(wall + DAY_MS)].map((offset) => wall - offset);
      const exact = candidates.filter((instant) => wallClockOf(timeZone, instant) === wall);
      // Twice in a night the clocks are turned back: the first of the two.
      if (exact.length > 0) return Math.min(...exact);
      // Skipped: read with the offset before the change, it falls just after the jump.
      return wall - offsetAt(wall - DAY_MS);
    },
  };
  clocks.set(timeZone, clock);
  return clock;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function partsFormatter(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** The zone's wall clock at `instant`, as milliseconds since the epoch read as if it were UTC (whole seconds). */
function wallClockOf(timeZone: string, instant: number): number {
  const parts: Record<string, number> = {};
  for (const part of partsFormatter(timeZone).formatToParts(new Date(instant))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  return Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
}
