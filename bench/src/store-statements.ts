import { spawnSync } from 'node:child_process';

/**
 * A counter of the statements PostgreSQL ran (all databases), from pg_stat_statements, which the
 * local stack preloads. What the store does per request, below FerretDB, is the number the
 * hot-path goals are set in; undefined where there is no local PostgreSQL (SQLite backend, or
 * MONGODB_URI given) or psql is missing.
 */
export function statementCounter(postgresUrl: string): (() => number | undefined) | undefined {
  if (!postgresUrl) return undefined;
  const read = (): number | undefined => {
    const result = spawnSync('psql', [postgresUrl, '-Atc', 'SELECT coalesce(sum(calls), 0) FROM pg_stat_statements'], { encoding: 'utf8' });
    const value = Number(result.stdout.trim());
    return result.status === 0 && Number.isFinite(value) ? value : undefined;
  };
  return read() === undefined ? undefined : read;
}

/** Statements per request between two readings (the two readings' own queries are left out). */
export function statementsPerRequest(before: number | undefined, after: number | undefined, requests: number): number | undefined {
  if (before === undefined || after === undefined || requests === 0) return undefined;
  return Math.round(((after - before - 2) / requests) * 100) / 100;
}

/** Our own processes, and the store's, as the per-process usage names them. */
export const OUR_SERVICES = ['gateway', 'registry', 'artifacts', 'rollout', 'telemetry'] as const;
export const STORE_PROCESSES = ['ferretdb', 'postgres'] as const;

/** The fleet of a million devices polling every 30 minutes that the hot-path goals are set for. */
export const FLEET_CHECKS_PER_SECOND = 556;
/** The same fleet polling every 5 minutes. */
export const BUSY_FLEET_CHECKS_PER_SECOND = 3_333;

/** CPU per request of our services and of the store, and the cores our services need for either fleet's rate. */
export function costOf(usage: Record<string, { cpuMsPerRequest: number }> | undefined) {
  if (!usage) return undefined;
  const sum = (names: readonly string[]) => Math.round(names.reduce((total, name) => total + (usage[name]?.cpuMsPerRequest ?? 0), 0) * 1000) / 1000;
  const servicesCpuMs = sum(OUR_SERVICES);
  return {
    servicesCpuMsPerRequest: servicesCpuMs,
    storeCpuMsPerRequest: sum(STORE_PROCESSES),
    servicesCoresFor556PerSecond: Math.round(((servicesCpuMs * FLEET_CHECKS_PER_SECOND) / 1000) * 100) / 100,
    servicesCoresFor3333PerSecond: Math.round(((servicesCpuMs * BUSY_FLEET_CHECKS_PER_SECOND) / 1000) * 100) / 100,
  };
}
