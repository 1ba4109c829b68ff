import type { DeploymentSummary } from '../../types';

type HeldNow = DeploymentSummary['held_now'];

/** A moment in the reader's own zone, the zone named, and the window's zone beside it when another. */
export function openingWords(at: string, windowZone: string | null): string {
  const local = new Date(at).toLocaleString(undefined, { weekday: 'short', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' });
  if (!windowZone) return local;
  // The window's own time as it was set, HH:MM on a 24-hour clock.
  const there = new Date(at).toLocaleString(undefined, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: windowZone });
  const readerZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  return windowZone === readerZone ? `${local} (the window's zone, ${windowZone})` : `${local} (${there} in ${windowZone}, the window's zone)`;
}

/**
 * What holds the devices not yet offered, in words, or null when nothing does but their next
 * check: a closed window (until when), then caps with no room. A closed window comes first: the
 * caps' room means nothing while no device may start.
 */
export function heldWords(held: HeldNow, windowZone: string | null): string | null {
  if (held.window_opens_at) {
    const caps = held.caps_room === null ? '' : `; then the caps let ${held.caps_room} start at once`;
    return `held by the maintenance window until ${openingWords(held.window_opens_at, windowZone)}${caps}`;
  }
  if (held.caps_room === 0) return 'held by the caps: no room for a new offer now (devices updating at once, or offers this minute)';
  return null;
}
