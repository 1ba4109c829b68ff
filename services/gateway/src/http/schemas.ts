// Request-body and query schemas: the gateway validates with them and the OpenAPI document is
// built from them, so the two cannot disagree; the TypeScript type of what each accepts is derived
// from it (`Accepted`), not written again.

import { CHECK_STATUSES, DEFERRED_EVENT, DEVICE_EVENTS, RESET_REASONS, STOPPED_EVENT } from '@ota/vocabulary';
import type { Accepted } from './validate';

export const DEVICE_ID_PATTERN = '^[A-Za-z0-9._:-]{1,128}$';
const UUID = { type: 'string', format: 'uuid', pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' } as const;
const SHORT_TEXT = { type: 'string', maxLength: 128 } as const;
/** Build numbers and schema versions: whole numbers, bounded so that they stay exact through JSON and JavaScript. */
const COUNT = { type: 'integer', minimum: 0, maximum: 2_147_483_647 } as const;

export const createProjectBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name: { type: 'string', minLength: 1, maxLength: 200 } },
} as const;

export const updateProjectBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    require_esp_image: {
      type: 'boolean',
      description: 'Uploads must be ESP-IDF application images: any other binary is refused with 400 (docs/api.md, "The image"). Default false.',
    },
  },
} as const;

export const createSessionBody = {
  type: 'object',
  additionalProperties: false,
  required: ['token'],
  properties: { token: { type: 'string', minLength: 1, maxLength: 512, description: 'A personal token (`ota_pat_...`).' } },
} as const;

/** Where the identity provider sends the browser back after a single sign-on. */
// Bounded so that the whole query, percent-encoded, stays within the 16 KiB Node.js allows a
// request's head (a longer one is 431 before the gateway sees it): the provider's code, state and
// error are URL-safe ASCII, and its description is free text.
export const signInCallbackQuery = {
  type: 'object',
  properties: {
    code: { type: 'string', maxLength: 2048, pattern: '^[\\x21-\\x7e]*$' },
    state: { type: 'string', maxLength: 200, pattern: '^[\\x21-\\x7e]*$' },
    error: { type: 'string', maxLength: 200, pattern: '^[\\x21-\\x7e]*$' },
    error_description: { type: 'string', maxLength: 500 },
  },
} as const;

export const createPersonalTokenBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    expires_at: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'When it stops working: ahead, at most 10 years; null: never. Left out: in `PERSONAL_TOKEN_TTL_DAYS` (90 days).',
    },
  },
} as const;

/** How far ahead a token's expiry may be. */
export const TOKEN_MAX_DAYS = 3650;

/** A role granted to a person (by e-mail) or to a group of the sign-in (docs/api.md, "Roles"). */
export const grantRoleBody = {
  type: 'object',
  additionalProperties: false,
  required: ['role'],
  properties: {
    email: { type: 'string', minLength: 3, maxLength: 254, description: 'The person to invite, whether or not they have signed in yet. Exactly one of `email` and `group`.' },
    group: { type: 'string', minLength: 1, maxLength: 200, description: 'A group the identity provider puts in the sign-in (the configured groups claim).' },
    confirm_unseen_group: { type: 'boolean', description: 'Grant to a group that no single sign-on has carried yet (409 without it).' },
    role: { type: 'string', enum: ['viewer', 'operator', 'approver', 'admin'] },
  },
} as const;

export const createProjectTokenBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'scope'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    scope: { type: 'string', enum: ['api', 'device'] },
    role: {
      type: 'string',
      enum: ['viewer', 'operator', 'approver', 'admin'],
      description: 'What an `api` token may do in the project (docs/api.md, "Roles"), needed, and acted with only while its maker holds as much. A `device` token takes none.',
    },
    expires_at: { type: ['string', 'null'], format: 'date-time', description: 'When it stops working: ahead, at most 10 years. Left out or null: never.' },
  },
} as const;

export const checkBody = {
  type: 'object',
  required: ['framework', 'chip_family', 'current_build_number'],
  properties: {
    device_id: { type: 'string', pattern: DEVICE_ID_PATTERN },
    framework: { type: 'string', enum: ['arduino', 'esp_idf'] },
    chip_family: { ...SHORT_TEXT, minLength: 1 },
    current_build_number: COUNT,
    board_id: SHORT_TEXT,
    hardware_revision: SHORT_TEXT,
    version_label: SHORT_TEXT,
    current_hash: { type: 'string', maxLength: 64 },
    partition_profile: SHORT_TEXT,
    nvs_schema_version: COUNT,
    security_mode: SHORT_TEXT,
    chip_revision: {
      type: 'integer',
      minimum: 0,
      maximum: 65_535,
      description: "The chip revision as ESP-IDF's `efuse_hal_chip_revision()` counts it: major × 100 + minor (v0.4 is 4). A build whose image leaves it out of its chip-revision range is not offered.",
    },
    secure_version: {
      type: 'integer',
      minimum: 0,
      maximum: 4_294_967_295,
      description: "The device's eFuse anti-rollback version (`esp_efuse_read_secure_version()`), when anti-rollback is on. A build whose image's `secure_version` is below it is not offered.",
    },
    delta_formats: {
      type: 'array',
      maxItems: 4,
      uniqueItems: true,
      items: { type: 'string', minLength: 1, maxLength: 64 },
      description:
        'The delta patch formats the device can apply (`detools-sequential-heatshrink-8-7`). With `current_hash`, an offer may then carry `patch`: the patch from the image it runs to the offered build. Leave it out for offers of full images only.',
    },
    utc_offset_minutes: {
      type: 'integer',
      minimum: -720,
      maximum: 840,
      description: "The device's local time's offset from UTC in minutes, east positive (120 for UTC+02:00): deployments whose maintenance windows are in device local time read them in it.",
    },
    health: {
      type: 'object',
      additionalProperties: false,
      required: ['reset_reason', 'boots', 'abnormal_boots', 'uptime_seconds'],
      description:
        'How the device has run since it installed the build it runs (docs/api.md, "Device health"), for deployments with the health_regression guardrail. Counted since the install, across reboots; a device that leaves it out is judged as before.',
      properties: {
        reset_reason: { type: 'string', enum: RESET_REASONS, description: "Why the device last reset: ESP-IDF's esp_reset_reason() lowercased without ESP_RST_ (panic, task_watchdog, brownout, software, ...)." },
        boots: { type: 'integer', minimum: 1, maximum: 2_147_483_647, description: 'Boots since the install, the first boot of the build included.' },
        abnormal_boots: { type: 'integer', minimum: 0, maximum: 2_147_483_647, description: 'Of those boots, the ones after a panic, a watchdog, a brownout or a CPU lockup.' },
        uptime_seconds: { type: 'number', minimum: 0, maximum: 3_155_760_000, description: 'Seconds the device has run since the install, summed over its boots.' },
        min_free_heap: { type: 'integer', minimum: 0, maximum: 4_294_967_295, description: 'The lowest free heap in bytes since the device booted (esp_get_minimum_free_heap_size()).' },
      },
    },
  },
} as const;

export type CheckBody = Accepted<typeof checkBody>;

/**
 * A status report's `detail`: nested at most four levels and 100 keys or items at each, as metadata
 * is. Its keys are free (it is stored as JSON text, not as document fields), so firmware that
 * names a key `esp.err` keeps its reports.
 */
export const DETAIL_MAX_DEPTH = 4;
/**
 * A JSON scalar, as one schema per type rather than a list of types: code generators that take a
 * `type` list only for `[T, null]` (oapi-codegen) generate a client from it.
 */
const JSON_SCALARS = [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }, { type: 'null' }] as const;
const DETAIL_SCALAR = { anyOf: JSON_SCALARS } as const;
function detailObject(depth: number): object {
  return { type: 'object', maxProperties: 100, additionalProperties: detailValue(depth - 1) };
}
function detailValue(depth: number): object {
  if (depth === 0) return DETAIL_SCALAR;
  return { anyOf: [...JSON_SCALARS, detailObject(depth), { type: 'array', maxItems: 100, items: detailValue(depth - 1) }] };
}
const DETAIL = { ...detailObject(DETAIL_MAX_DEPTH), type: ['object', 'null'] } as { type: ['object', 'null'] };

export const statusBody = {
  type: 'object',
  required: ['deployment_id', 'event'],
  properties: {
    device_id: { type: 'string', pattern: DEVICE_ID_PATTERN },
    deployment_id: UUID,
    event: { type: 'string', enum: [...DEVICE_EVENTS, STOPPED_EVENT, DEFERRED_EVENT] },
    build_number: COUNT,
    deferred_until: {
      type: 'string',
      format: 'date-time',
      description: 'With `deferred` (and only with it): when the device wants to be offered the build again; in the future, at most 30 days ahead.',
    },
    reason: { type: ['string', 'null'], maxLength: 128 },
    detail: DETAIL,
  },
} as const;

export type StatusBody = Accepted<typeof statusBody>;

/** A device mid-update asks whether its offer still stands (docs/api.md, "Stopping devices mid-update"). */
export const offerStandingBody = {
  type: 'object',
  required: ['deployment_id'],
  properties: {
    device_id: { type: 'string', pattern: DEVICE_ID_PATTERN },
    deployment_id: UUID,
  },
} as const;

export type OfferStandingBody = Accepted<typeof offerStandingBody>;

/**
 * A `limit` query parameter: any whole number from 1 up. A larger one than the endpoint serves is
 * capped, not refused (docs/api.md, "Conventions"); read it with `cappedLimit`.
 */
export function limitParameter(defaultLimit: number, maxLimit: number) {
  return { ...PAGE_LIMIT, description: `At most this many records, newest first. Default ${defaultLimit}; a larger value than ${maxLimit} is served as ${maxLimit}.` } as const;
}

/** A page size in a query: a whole number from 1 (validate.ts reads it as a number). */
export const PAGE_LIMIT = { type: 'integer', minimum: 1, maximum: 999_999_999 } as const;

/** The limit a request asked for, or the default, never above the cap. */
export function cappedLimit(limit: number | undefined, defaultLimit: number, maxLimit: number): number {
  return limit === undefined ? defaultLimit : Math.min(limit, maxLimit);
}

export const CHECK_EVENTS_LIMIT = { default: 20, max: 20 } as const;
export const AUDIT_LIMIT = { default: 100, max: 1000 } as const;

/** Query parameters arrive as strings; each is checked in its text form. */
export const checkEventsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: limitParameter(CHECK_EVENTS_LIMIT.default, CHECK_EVENTS_LIMIT.max),
    since: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(?::\\d{2}(?:\\.\\d+)?)?(?:Z|[+-]\\d{2}:\\d{2})$' },
    decision: { type: 'string', enum: ['offered', 'no_update'] },
    status: { type: 'string', enum: CHECK_STATUSES },
  },
} as const;

export const DEVICE_EVENTS_LIMIT = { default: 100, max: 100 } as const;

export const deviceEventsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: limitParameter(DEVICE_EVENTS_LIMIT.default, DEVICE_EVENTS_LIMIT.max),
    since: checkEventsQuery.properties.since,
  },
} as const;

const NAME = { type: 'string', pattern: '^[A-Za-z0-9._-]{1,64}$' } as const;
const UUID_LIST = { type: 'array', items: UUID, maxItems: 100, uniqueItems: true } as const;
const PERCENTAGE = { type: 'integer', minimum: 0, maximum: 100 } as const;
const BOOLEAN_TEXT = { type: 'string', enum: ['true', 'false'] } as const;
/** A UUID in a query. */
export const UUID_TEXT = UUID;

export const createChannelBody = { type: 'object', additionalProperties: false, required: ['name'], properties: { name: NAME } } as const;
export const createGroupBody = createChannelBody;

export const renameBody = { type: 'object', additionalProperties: false, required: ['name'], properties: { name: NAME } } as const;

/** At most this many devices in one bulk membership change. */
export const BULK_MEMBERS_MAX = 1000;

const DEVICE_UUIDS = { type: 'array', items: UUID, maxItems: BULK_MEMBERS_MAX, uniqueItems: true } as const;

export const changeMembersBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    add: { ...DEVICE_UUIDS, description: `Device UUIDs to add (at most ${BULK_MEMBERS_MAX}); members already are not an error.` },
    remove: { ...DEVICE_UUIDS, description: `Device UUIDs to remove (at most ${BULK_MEMBERS_MAX}); non-members are not an error.` },
  },
} as const;

export const membershipChangeBody = {
  type: 'object',
  additionalProperties: false,
  required: ['action', 'matching'],
  properties: {
    action: { type: 'string', enum: ['add', 'remove'], description: '`add` the matching devices to the group, or `remove` the matching members from it.' },
    matching: {
      type: 'object',
      additionalProperties: false,
      description: 'The devices to change: those that match every filter given, as in the device list (`{}`: every device of the project).',
      properties: {
        active: { type: 'boolean', description: 'Only devices that are (or are not) active.' },
        group_id: { ...UUID, description: 'Only members of this group.' },
        channel_id: { ...UUID, description: 'Only devices on this channel.' },
        chip_family: { type: 'string', minLength: 1, maxLength: 64, description: 'Only devices that reported this chip family.' },
        search: { type: 'string', minLength: 1, maxLength: 128, description: 'Only devices whose `device_id` contains this text, in any case.' },
      },
    },
  },
} as const;

export const addMemberBody = {
  type: 'object',
  additionalProperties: false,
  required: ['device_id'],
  properties: { device_id: { ...UUID, description: "The device's UUID (its `id`)." } },
} as const;

/**
 * Device metadata: a JSON object of up to 100 keys, nested at most four levels. Keys may not be
 * empty, contain `.` or start with `$`, and an array may not hold an array: the document stores
 * refuse both (FerretDB has no nested arrays). The nesting is spelled out rather than recursive so
 * that the schema stays self-contained in the OpenAPI document.
 */
const METADATA_KEY = { type: 'string', pattern: '^[^.$][^.]{0,127}$' } as const;
const METADATA_SCALAR = { anyOf: JSON_SCALARS } as const;
function metadataObject(depth: number): object {
  return { type: 'object', maxProperties: 100, propertyNames: METADATA_KEY, additionalProperties: metadataValue(depth - 1) };
}
function metadataValue(depth: number): object {
  if (depth === 0) return METADATA_SCALAR;
  const element = depth > 1 ? { anyOf: [...JSON_SCALARS, metadataObject(depth - 1)] } : METADATA_SCALAR;
  return { anyOf: [...JSON_SCALARS, metadataObject(depth), { type: 'array', maxItems: 100, items: element }] };
}
// Typed by its outer shape only: to the compiler, metadata is an object of unknown values.
const METADATA = metadataObject(4) as { type: 'object' };


export const createDeviceBody = {
  type: 'object',
  additionalProperties: false,
  required: ['device_id'],
  properties: {
    device_id: { type: 'string', pattern: DEVICE_ID_PATTERN },
    framework: { type: 'string', enum: ['arduino', 'esp_idf'] },
    chip_family: SHORT_TEXT,
    board_id: SHORT_TEXT,
    hardware_revision: SHORT_TEXT,
    partition_profile: SHORT_TEXT,
    nvs_schema_version: COUNT,
    security_mode: SHORT_TEXT,
    channel_id: UUID,
    active: { type: 'boolean' },
    metadata: METADATA,
  },
} as const;

export const updateDeviceBody = {
  type: 'object',
  additionalProperties: false,
  properties: { active: { type: 'boolean' }, metadata: METADATA, channel_id: UUID },
} as const;

export const updateArtifactBody = {
  type: 'object',
  additionalProperties: false,
  required: ['archived'],
  properties: { archived: { type: 'boolean' } },
} as const;

export const requestPatchBody = {
  type: 'object',
  additionalProperties: false,
  required: ['base_artifact_id'],
  properties: { base_artifact_id: { type: 'string', format: 'uuid', description: 'The build devices run now, which the patch starts from.' } },
} as const;

export const createSigningKeyBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'public_key'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    public_key: { type: 'string', minLength: 1, maxLength: 4096, description: 'Ed25519 public key: PEM (SPKI), or base64 of its 32 raw bytes.' },
  },
} as const;

export const createDeploymentBody = {
  type: 'object',
  additionalProperties: false,
  required: ['artifact_id'],
  properties: {
    artifact_id: UUID,
    target_group_ids: UUID_LIST,
    target_channel_ids: UUID_LIST,
    rollout_percentage: PERCENTAGE,
    rollout_strategy: { type: 'string', enum: ['immediate'] },
    notes: { type: 'string', maxLength: 2000 },
    acknowledge_secure_version_raise: {
      type: 'boolean',
      description:
        "Required `true` when the build's image raises secure_version (its artifact's `secure_version_raise`): every device that confirms it burns eFuse bits and never runs a lower version again. Needs the approver role.",
    },
    guardrails: {
      type: 'object',
      additionalProperties: false,
      description: 'Optional. What pauses the deployment by itself (docs/api.md, "Guardrails and staged plans"); a person resumes it.',
      properties: {
        failure_threshold: {
          type: 'object',
          additionalProperties: false,
          required: ['percent', 'min_finished'],
          description: 'Pause when at least min_finished targeted devices finished and failed + rolled_back (+ timed out) over finished is at or above percent.',
          properties: { percent: { type: 'number', exclusiveMinimum: 0, maximum: 100 }, min_finished: { type: 'integer', minimum: 1, maximum: 1_000_000_000 } },
        },
        reason_limits: {
          type: 'array',
          maxItems: 20,
          description: 'Pause at once when count failures with the reason arrive within window_seconds.',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['reason', 'count', 'window_seconds'],
            properties: {
              reason: { type: 'string', pattern: '^[a-z0-9_]{1,64}$' },
              count: { type: 'integer', minimum: 1, maximum: 1_000_000_000 },
              window_seconds: { type: 'integer', minimum: 1, maximum: 604_800 },
            },
          },
        },
        confirm_timeout_seconds: {
          type: 'integer',
          minimum: 1,
          maximum: 604_800,
          description: 'A device that reported progress but neither confirmed nor failed this long after its last status counts as failed (reason no_confirmation).',
        },
        health_regression: {
          type: 'object',
          additionalProperties: false,
          description:
            'Pause when devices on the build reset abnormally (crash, watchdog, brownout) per hour run more often than the targeted devices not yet updated, beyond margin_percent, at one-sided significance (docs/api.md, "Device health"). {} takes every default.',
          properties: {
            margin_percent: { type: 'number', minimum: 0, maximum: 1000, default: 50, description: "How much higher than the previous builds' rate the build's may be before it counts as a regression." },
            significance: { type: 'number', exclusiveMinimum: 0, maximum: 0.1, default: 0.001, description: 'The p-value below which the exact conditional test of the two rates judges a regression.' },
            min_devices: { type: 'integer', minimum: 1, maximum: 1_000_000_000, default: 20, description: 'Devices each side needs before it is judged.' },
            min_device_hours: { type: 'number', exclusiveMinimum: 0, maximum: 1_000_000_000, default: 50, description: 'Hours run, summed over devices, each side needs before it is judged.' },
          },
        },
      },
    },
    caps: {
      type: 'object',
      additionalProperties: false,
      description:
        'Optional. How fast the deployment may start updates (docs/api.md, "Offer caps"): a device held back is told not_in_rollout and to check again after the minute. Each left out: no such cap.',
      properties: {
        offers_per_minute: { type: 'integer', minimum: 1, maximum: 100_000, description: 'New offers in each minute of the clock, across every replica.' },
        max_in_progress: { type: 'integer', minimum: 1, maximum: 1_000_000_000, description: 'Devices between offered and a terminal status (confirmed, failed, rolled_back) at once.' },
      },
    },
    maintenance_windows: {
      type: 'object',
      additionalProperties: false,
      required: ['time_zone', 'windows'],
      description:
        'Optional. Weekly windows in which the deployment offers its build (docs/api.md, "Maintenance windows"); outside them a check answers not_in_rollout with window_opens_at. Absent: at any time.',
      properties: {
        time_zone: { type: 'string', minLength: 1, maxLength: 64, description: 'An IANA time zone (Europe/Berlin, UTC) the windows\' local times are read in.' },
        in_device_local_time: {
          type: 'boolean',
          default: false,
          description: 'Read the windows in each device\'s own local time, from the utc_offset_minutes its check reports; time_zone serves devices that report none.',
        },
        windows: {
          type: 'array',
          minItems: 1,
          maxItems: 20,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['days', 'start', 'duration_minutes'],
            properties: {
              days: { type: 'array', minItems: 1, maxItems: 7, uniqueItems: true, items: { type: 'string', enum: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] } },
              start: { type: 'string', pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'Local time HH:MM at which the window opens.' },
              duration_minutes: { type: 'integer', minimum: 1, maximum: 10_080, description: 'How long it stays open, in minutes of real time (at most a week).' },
            },
          },
        },
      },
    },
    stages: {
      type: 'array',
      maxItems: 10,
      description:
        'Optional staged plan. Starting begins at the first stage (rollout_percentage, if given, must equal its percentage); after min_wait_seconds without a guardrail tripping the deployment ramps itself to the next stage, unless that stage has approval_required, which waits for a person\'s ramp.',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['percentage'],
        properties: {
          percentage: { type: 'integer', minimum: 1, maximum: 100 },
          min_wait_seconds: { type: 'integer', minimum: 0, maximum: 2_592_000, default: 0 },
          approval_required: { type: 'boolean', default: false },
        },
      },
    },
  },
} as const;

export type GuardrailsBody = NonNullable<Accepted<typeof createDeploymentBody>['guardrails']>;

export const transitionBody = {
  type: 'object',
  additionalProperties: false,
  required: ['action'],
  properties: {
    action: { type: 'string', enum: ['start', 'pause', 'resume', 'cancel', 'complete', 'ramp'] },
    rollout_percentage: PERCENTAGE,
    confirm_all: { type: 'boolean' },
    override_holds: {
      type: 'boolean',
      description: 'Go around the holds on the build (docs/api.md, "Holds on a build"): approvers only; the answer and the audit name them.',
    },
  },
} as const;

/** The largest page of device states one request gets. */
export const STATES_PAGE_MAX = 1000;

export const listStatesQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    status: { type: 'string', pattern: '^[a-z_]{1,32}$', description: 'Only devices at this rollout status now (`failed` includes the silent ones).' },
    limit: {
      ...PAGE_LIMIT,
      description: `A page of at most this many (a larger value is served as ${STATES_PAGE_MAX}), in the order of the devices' UUIDs; the answer's headers count the matches and say where the next page starts.`,
    },
    after_id: { ...UUID_TEXT, description: "The page that starts after this device UUID: the answer's `X-Next-After-Id` (needs `limit`)." },
    offset: { type: 'integer', minimum: 0, maximum: 999_999_999, description: 'No longer served past 0: pages follow `after_id`. Kept so that a client that sends it hears why.' },
  },
} as const;

export const previewQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    id_prefix: { type: 'string', pattern: '^[0-9a-f]{1,2}$', description: 'Only the devices whose `id` begins with these 1 or 2 lowercase hex digits: one part of a large fleet.' },
  },
} as const;

/** The largest page of devices one request gets. */
export const DEVICE_PAGE_MAX = 1000;

export const listDevicesQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    active: BOOLEAN_TEXT,
    group_id: UUID_TEXT,
    channel_id: UUID_TEXT,
    chip_family: { type: 'string', minLength: 1, maxLength: 64, description: 'Only devices that reported this chip family.' },
    q: { type: 'string', minLength: 1, maxLength: 128, description: 'Only devices whose `device_id` contains this text, in any case.' },
    device_id: { type: 'string', minLength: 1, maxLength: 128, description: 'Only the device with exactly this `device_id` (at most one).' },
    limit: {
      ...PAGE_LIMIT,
      description: `A page of at most this many devices (a larger value is served as ${DEVICE_PAGE_MAX}), in the order of their \`id\`s; the answer's headers count the matches and say where the next page starts. Without it, every match in one answer, ordered by \`device_id\`.`,
    },
    after_id: { ...UUID_TEXT, description: "The page that starts after this device `id`: the answer's `X-Next-After-Id` (needs `limit`)." },
    after: { type: 'string', minLength: 1, maxLength: 128, description: 'The page after the device with this `device_id` (needs `limit`; `after_id` is the same for the device of that `id`).' },
    ids: { type: 'string', pattern: '^[0-9a-f-]{36}(,[0-9a-f-]{36}){0,99}$', description: 'Only these devices: up to 100 comma-separated UUIDs (to name the devices of a page of states, say).' },
  },
} as const;

export const reachQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    group_ids: { type: 'string', pattern: '^[0-9a-f-]{36}(,[0-9a-f-]{36}){0,99}$', description: 'Comma-separated group ids (any of them).' },
    channel_ids: { type: 'string', pattern: '^[0-9a-f-]{36}(,[0-9a-f-]{36}){0,99}$', description: 'Comma-separated channel ids (any of them).' },
  },
} as const;

export const listProjectsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    email: { type: 'string', minLength: 3, maxLength: 254, description: 'Staff only: the owner, by exact e-mail.' },
    owner_id: { ...UUID_TEXT, description: 'Staff only: the owner, by id.' },
  },
} as const;

export const usersQuery = {
  type: 'object',
  additionalProperties: false,
  required: ['email'],
  properties: { email: { type: 'string', minLength: 3, maxLength: 254 } },
} as const;

export const auditQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: limitParameter(AUDIT_LIMIT.default, AUDIT_LIMIT.max),
    before: { ...UUID, description: 'Only events older than this one: the `id` of the last event of the previous page.' },
    action: {
      type: 'string',
      pattern: '^[a-z_]{1,40}(\\.[a-z_]{1,40})?$',
      description: 'Only this action (`deployment.cancelled`), or every action of one resource (`deployment`).',
    },
  },
} as const;
