// The pieces every answer schema is built from (response-schemas.ts, crash-schemas.ts).

export const UUID = { type: 'string', format: 'uuid' } as const;
export const TIME = { type: 'string', format: 'date-time' } as const;
export const NULLABLE_TIME = { type: ['string', 'null'], format: 'date-time' } as const;

/**
 * An object schema: every property required unless named in `optional`, nothing else allowed. Its
 * keys stay in its type, so `Promised` can hold a presenter to what the document promises.
 */
export function object<const P extends Record<string, object>, const O extends keyof P & string = never>(properties: P, optional: readonly O[] = []) {
  return {
    type: 'object',
    additionalProperties: false,
    required: Object.keys(properties).filter((key) => !(optional as readonly string[]).includes(key)) as Array<Exclude<keyof P & string, O>>,
    properties,
  } as const;
}

/**
 * What an answer must hold to match its schema: each required property present, no property the
 * schema does not name. Presenters (present.ts) check their answers against it with `satisfies`.
 */
export type Promised<S extends { properties: object; required: readonly string[] }> = { [K in S['required'][number]]: unknown } & { [K in keyof S['properties']]?: unknown };

export const COUNT = { type: 'integer', minimum: 0 } as const;

