// Request-body schemas: the gateway validates with them and the OpenAPI document is built from
// them, so the two cannot disagree.

export const DEVICE_ID_PATTERN = '^[A-Za-z0-9._:-]{1,128}$';
const UUID = { type: 'string', pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' } as const;
const SHORT_TEXT = { type: 'string', maxLength: 128 } as const;

export const createProjectBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name: { type: 'string', minLength: 1, maxLength: 200 } },
} as const;

export const createPersonalTokenBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name: { type: 'string', minLength: 1, maxLength: 100 } },
} as const;

export const createProjectTokenBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'scope'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    scope: { type: 'string', enum: ['api', 'device'] },
  },
} as const;

export const checkBody = {
  type: 'object',
  required: ['framework', 'chip_family', 'current_build_number'],
  properties: {
    device_id: { type: 'string', pattern: DEVICE_ID_PATTERN },
    framework: { type: 'string', enum: ['arduino', 'esp_idf'] },
    chip_family: { ...SHORT_TEXT, minLength: 1 },
    current_build_number: { type: 'integer', minimum: 0 },
    board_id: SHORT_TEXT,
    hardware_revision: SHORT_TEXT,
    version_label: SHORT_TEXT,
    current_hash: { type: 'string', maxLength: 64 },
    partition_profile: SHORT_TEXT,
    nvs_schema_version: { type: 'integer', minimum: 0 },
    security_mode: SHORT_TEXT,
  },
} as const;

export interface CheckBody {
  device_id?: string;
  framework: 'arduino' | 'esp_idf';
  chip_family: string;
  current_build_number: number;
  board_id?: string;
  hardware_revision?: string;
  version_label?: string;
  current_hash?: string;
  partition_profile?: string;
  nvs_schema_version?: number;
  security_mode?: string;
}

export const statusBody = {
  type: 'object',
  required: ['deployment_id', 'event'],
  properties: {
    device_id: { type: 'string', pattern: DEVICE_ID_PATTERN },
    deployment_id: UUID,
    event: { type: 'string', minLength: 1, maxLength: 64 },
    build_number: { type: 'integer', minimum: 0 },
    reason: { type: ['string', 'null'], maxLength: 128 },
    detail: { type: ['object', 'null'] },
  },
} as const;

export interface StatusBody {
  device_id?: string;
  deployment_id: string;
  event: string;
  build_number?: number;
  reason?: string | null;
  detail?: Record<string, unknown> | null;
}

export const CHECK_STATUSES = [
  'offered',
  'up_to_date',
  'no_compatible_build',
  'device_inactive',
  'over_limit',
  'not_in_rollout',
  'no_active_deployment',
  'token_required',
] as const;

/** Query parameters arrive as strings; each is checked in its text form. */
export const checkEventsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'string', pattern: '^(?:[1-9]|1[0-9]|20)$' },
    since: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(?::\\d{2}(?:\\.\\d+)?)?(?:Z|[+-]\\d{2}:\\d{2})$' },
    decision: { type: 'string', enum: ['offered', 'no_update'] },
    status: { type: 'string', enum: CHECK_STATUSES },
  },
} as const;

export interface CheckEventsQuery {
  limit?: string;
  since?: string;
  decision?: string;
  status?: string;
}
