// The only module that reads process.env. Each service declares a schema of typed settings with
// named defaults; parsing fails fast with a message that names every bad key.

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export interface Setting<T> {
  readonly description: string;
  readonly defaultValue: T | undefined;
  parse(raw: string): T;
}

type Schema = Record<string, Setting<unknown>>;
export type ConfigOf<S extends Schema> = { [K in keyof S]: S[K] extends Setting<infer T> ? T : never };

function setting<T>(description: string, defaultValue: T | undefined, parse: (raw: string) => T): Setting<T> {
  return { description, defaultValue, parse };
}

export function str(description: string, defaultValue?: string): Setting<string> {
  return setting(description, defaultValue, (raw) => raw);
}

export function int(description: string, defaultValue?: number, min = 0, max = Number.MAX_SAFE_INTEGER): Setting<number> {
  return setting(description, defaultValue, (raw) => {
    const value = Number(raw);
    if (!/^-?\d+$/.test(raw.trim()) || !Number.isSafeInteger(value)) throw new Error(`expected an integer, got "${raw}"`);
    if (value < min || value > max) throw new Error(`expected an integer from ${min} to ${max}, got ${value}`);
    return value;
  });
}

export function port(description: string, defaultValue?: number): Setting<number> {
  return int(description, defaultValue, 0, 65535);
}

export function bool(description: string, defaultValue?: boolean): Setting<boolean> {
  return setting(description, defaultValue, (raw) => {
    if (['1', 'true', 'yes'].includes(raw.toLowerCase())) return true;
    if (['0', 'false', 'no'].includes(raw.toLowerCase())) return false;
    throw new Error(`expected true or false, got "${raw}"`);
  });
}

export function oneOf<T extends string>(description: string, values: readonly T[], defaultValue?: T): Setting<T> {
  return setting(description, defaultValue, (raw) => {
    if (!(values as readonly string[]).includes(raw)) throw new Error(`expected one of ${values.join(', ')}, got "${raw}"`);
    return raw as T;
  });
}

/** Reads every key of `schema` from `env`; throws one ConfigError that lists every problem. */
export function loadConfig<S extends Schema>(schema: S, env: NodeJS.ProcessEnv = process.env): ConfigOf<S> {
  const problems: string[] = [];
  const config: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(schema)) {
    const raw = env[key];
    if (raw === undefined || raw === '') {
      if (spec.defaultValue === undefined) problems.push(`${key} is required (${spec.description})`);
      else config[key] = spec.defaultValue;
      continue;
    }
    try {
      config[key] = spec.parse(raw);
    } catch (error) {
      problems.push(`${key}: ${(error as Error).message}`);
    }
  }
  if (problems.length > 0) throw new ConfigError(`invalid configuration:\n  ${problems.join('\n  ')}`);
  return config as ConfigOf<S>;
}

/**
 * Refuses a secret left at its development default (docs/security.md, "Secrets"): a service
 * started that way outside the local stack would sign or seal with a key anyone can read in this
 * repository. The local stack sets ALLOW_DEVELOPMENT_SECRETS.
 */
export function refuseDevelopmentSecret(key: string, value: string, developmentValue: string, allowed: boolean): void {
  if (value === developmentValue && !allowed) {
    throw new ConfigError(`invalid configuration:\n  ${key} is the development default, which anyone can read in the source: set a secret of your own (the chart generates one), or ALLOW_DEVELOPMENT_SECRETS=true on a local stack`);
  }
}

/** A Markdown table of a schema's keys, defaults and descriptions, for docs/operations.md. */
export function describeConfig(schema: Schema): string {
  const rows = Object.entries(schema).map(([key, spec]) => {
    const shown = spec.defaultValue === undefined ? '(required)' : spec.defaultValue === '' ? '(empty)' : `\`${String(spec.defaultValue)}\``;
    return `| \`${key}\` | ${shown} | ${spec.description} |`;
  });
  return ['| Variable | Default | Meaning |', '|---|---|---|', ...rows].join('\n');
}

/**
 * Where the firmware binaries are kept: read by the artifacts service, which stores them, and by
 * the gateway, which presigns download URLs of them when DOWNLOAD_URLS is `presigned`.
 */
export const s3ConnectionSettings = {
  S3_ENDPOINT: str('S3 endpoint URL; empty means AWS S3 of S3_REGION', ''),
  S3_REGION: str('S3 region', 'us-east-1'),
  S3_BUCKET: str('bucket that holds the firmware binaries', 'ota-artifacts'),
  S3_ACCESS_KEY_ID: str('S3 access key id; empty uses the default AWS credential chain', ''),
  S3_SECRET_ACCESS_KEY: str('S3 secret access key', ''),
  S3_FORCE_PATH_STYLE: bool('address buckets by path (MinIO, s3rver) instead of by host name', true),
};
