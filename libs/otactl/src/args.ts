import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A usage mistake (an unknown flag, a missing value): exit code 1 with the usage. */
export class UsageError extends Error {}

/** A duration as people write it: `90`, `90s`, `15m`, `2h` (seconds without a unit). */
export function seconds(text: string, flag: string): number {
  const match = /^(\d+)(s|m|h)?$/.exec(text.trim());
  if (!match) throw new UsageError(`${flag} must be a duration such as 90s, 15m or 2h`);
  return Number(match[1]) * { s: 1, m: 60, h: 3600 }[(match[2] ?? 's') as 's' | 'm' | 'h'];
}

export function integer(text: string, flag: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || value < min || value > max) throw new UsageError(`${flag} must be a whole number from ${min} to ${max}`);
  return value;
}

/** Parses `argv` with Node's own parser; an unknown flag is a usage error. */
export function parse<const O extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: O): ReturnType<typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>> {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
