import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { invalidArgument } from '@ota/errors';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { ValidationFailed, type ValidationIssue } from './errors';

/**
 * The TypeScript type of what a schema accepts, derived from the schema itself. Ajv runs without
 * `useDefaults`, so a field with a `default` is still optional in what a handler receives.
 */
export type Accepted<S> = S extends JSONSchema ? FromSchema<S, { keepDefaultedPropertiesOptional: true }> : never;

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const ajv = new Ajv({ allErrors: true, coerceTypes: false });
// The formats the document uses, so that generated clients type them: a lowercase UUID (as every id
// is), a binary part (checked by the upload itself, not here), and a time.
ajv.addFormat('uuid', UUID_PATTERN);
ajv.addFormat('binary', true);
// An RFC 3339 time with its offset (2026-11-27T10:00:00Z, or +01:00), as the responses write them.
ajv.addFormat('date-time', isDateTime);
const compiled = new WeakMap<object, ValidateFunction>();

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:Z|[+-](\d{2}):(\d{2}))$/i;

/**
 * An RFC 3339 date-time that names a moment that exists: a day its month has (no 2027-02-30), hours
 * 00 to 23 (no 24:00:00), minutes and seconds 00 to 59, an offset within a day. Date.parse alone
 * rolls the impossible ones over into the next day or month.
 */
export function isDateTime(text: string): boolean {
  const match = DATE_TIME.exec(text);
  if (!match) return false;
  const [year, month, day, hour, minute, second, offsetHours = 0, offsetMinutes = 0] = match.slice(1).map((part) => Number(part ?? 0));
  const daysInMonth = new Date(Date.UTC(year!, month!, 0)).getUTCDate();
  return month! >= 1 && month! <= 12 && day! >= 1 && day! <= daysInMonth && hour! <= 23 && minute! <= 59 && second! <= 59 && offsetHours <= 23 && offsetMinutes <= 59;
}

function compile<T>(schema: object): ValidateFunction<T> {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate as ValidateFunction<T>;
}

function issuesOf(errors: ErrorObject[], where: 'body' | 'query'): ValidationIssue[] {
  return errors.map((error) => {
    const loc: Array<string | number> = [where, ...error.instancePath.split('/').filter(Boolean)];
    if (error.keyword === 'required') loc.push(String(error.params.missingProperty));
    if (error.keyword === 'additionalProperties') loc.push(String(error.params.additionalProperty));
    const msg = error.keyword === 'additionalProperties' ? 'unknown field' : (error.message ?? 'invalid');
    return { loc, msg, type: error.keyword };
  });
}

/** Developer API: a body that fails its schema is a 422 with an array of issues. */
export function parseBody<S extends object>(schema: S, body: unknown): Accepted<S> {
  const validate = compile<Accepted<S>>(schema);
  if (!validate(body)) throw new ValidationFailed(issuesOf(validate.errors ?? [], 'body'));
  return body;
}

/** Query parameters: a failure is the same 422 as a body schema failure. */
export function parseQuery<S extends object>(schema: S, query: Record<string, unknown>): Accepted<S> {
  const validate = compile<Accepted<S>>(schema);
  const read = withIntegersRead(schema, query);
  if (!validate(read)) throw new ValidationFailed(issuesOf(validate.errors ?? [], 'query'));
  return read;
}

/** A whole number as a query writes it: digits, no sign, no leading zero, no more than fit a double exactly. */
const QUERY_INTEGER = /^(0|[1-9]\d{0,14})$/;

/**
 * Query values arrive as text; a parameter the schema types `integer` (so that generated clients
 * send a number) is read as one when written as one, and otherwise left as text for the schema to
 * refuse.
 */
function withIntegersRead(schema: object, query: Record<string, unknown>): Record<string, unknown> {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const read = { ...query };
  for (const [name, value] of Object.entries(query)) {
    if (properties[name]?.type === 'integer' && typeof value === 'string' && QUERY_INTEGER.test(value)) read[name] = Number(value);
  }
  return read;
}

/** Device API: a malformed body is a 400 with one readable sentence. */
export function parseDeviceBody<S extends object>(schema: S, body: unknown): Accepted<S> {
  const validate = compile<Accepted<S>>(schema);
  if (!validate(body)) {
    const issues = issuesOf(validate.errors ?? [], 'body');
    throw invalidArgument(issues.map((issue) => `${issue.loc.slice(1).join('.') || 'body'}: ${issue.msg}`).join('; '));
  }
  return body;
}

