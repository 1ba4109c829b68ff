// JSON Schemas of every answer body. The OpenAPI document is built from them: each exported schema
// is a named component there (the console's TypeScript types are generated from those), and the
// tests validate each response they receive against that document.
import { MANIFEST_SCHEMA } from '@ota/manifest';
import { CHECK_STATUSES, PREVIEW_OUTCOMES, ROLLOUT_STATUSES, STOP_STATUSES } from '@ota/vocabulary';

import { COUNT, NULLABLE_TIME, object, TIME, UUID, type Promised } from './schema-building';
import { ArtifactElf } from './crash-schemas';
import { ArtifactSbom } from './supply-chain-schemas';

export type { Promised };
export { ArtifactElf, CoreDumpReceipt, Crash, CrashFrame, CrashGroup, CrashGroupDetail } from './crash-schemas';
export { Webhook, WebhookCreated, WebhookDelivery } from './webhook-answers';
export { ArtifactSbom, Downloads, Exposure, FleetBuilds, Patch, Vulnerability, VulnerabilityReport } from './supply-chain-schemas';

export const Error = object({ detail: { type: 'string' } });

export const ValidationError = object({
  detail: {
    type: 'array',
    items: object({
      loc: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'integer' }] } },
      msg: { type: 'string' },
      type: { type: 'string' },
    }),
  },
});

/** A role in a project (docs/api.md, "Roles"): one component, so that a generated client has one type of it. */
export const Role = { type: 'string', enum: ['viewer', 'operator', 'approver', 'admin'] } as const;
const ROLE = Role;

/** What a build fits (docs/api.md, "Artifact and manifest"): the upload's `manifest` part, as JSON. */
export const Manifest = MANIFEST_SCHEMA;

/** How an actor signed in. */
export const SignInVia = { type: 'string', enum: ['personal_token', 'console_session', 'sso_session', 'project_token'] } as const;

/**
 * A value of `schema` or null. Written as anyOf of the named schema and null (not a type list with
 * null in the enum), so that generators make one type of it and an optional or pointer of that.
 */
function orNull<const S extends object, const D extends string>(schema: S, description: D) {
  return { anyOf: [schema, { type: 'null' }], description } as const;
}

export const SignInMethods = object({
  personal_token: { type: 'boolean', description: 'Always true: a personal token signs in (POST /session/).' },
  single_sign_on: { type: 'boolean', description: 'Whether GET /session/sso/ starts a sign-in through the configured identity provider.' },
});

export const Project = object(
  {
    id: UUID,
    name: { type: 'string' },
    slug: { type: 'string' },
    owner_id: UUID,
    require_esp_image: { type: 'boolean', description: 'Uploads must be ESP-IDF application images (docs/api.md, "The image").' },
    created_at: TIME,
    role: { ...ROLE, description: 'The caller\'s role in the project (docs/api.md, "Roles"), where the answer is the caller\'s list or read of projects.' },
  },
  ['role'],
);

/** Who holds a role in a project: its owner, a person granted one, a group of the sign-in granted one, or an e-mail invited to one. */
export const ProjectMember = object(
  {
    kind: { type: 'string', enum: ['owner', 'user', 'group', 'invitation'] },
    user_id: { ...UUID, description: 'The person (owner and user).' },
    email: { type: 'string', description: "The person's e-mail (owner and user), or the address invited (invitation)." },
    group: { type: 'string', description: 'The group a sign-in carries (group).' },
    holders: { type: 'array', items: { type: 'string' }, description: 'Group: the e-mails of the people whose latest single sign-on carried it (as last seen; at most 1,000).' },
    role: ROLE,
    granted_at: { type: ['string', 'null'], format: 'date-time', description: 'When it was granted, or the invitation made; null for the owner.' },
  },
  ['user_id', 'email', 'group', 'holders'],
);

export const MyInvitation = object({
  project_id: UUID,
  project_name: { type: 'string' },
  role: ROLE,
  invited_at: TIME,
});

export const User = object({
  id: UUID,
  email: { type: 'string' },
  is_staff: { type: 'boolean' },
  max_devices: { type: 'integer' },
  max_uploads_per_month: { type: 'integer' },
  created_at: TIME,
});

export const Session = object({
  user: object({ id: UUID, email: { type: 'string' }, is_staff: { type: 'boolean' } }),
  token_prefix: { type: 'string', description: 'The prefix of the personal token the session acts with.' },
  csrf_token: { type: 'string', description: 'Send it in `x-csrf-token` on every mutating call made with the session cookie.' },
  expires_at: TIME,
});

/** Whether a count of devices is extrapolated from a sample (docs/api.md, "Counts in a large project"). */
const ESTIMATED = { type: 'boolean', description: 'The count is extrapolated from a sample of a large project, not counted device by device.' } as const;
export const Channel = object({
  id: UUID,
  name: { type: 'string' },
  is_default: { type: 'boolean' },
  created_at: TIME,
  device_count: { ...COUNT, description: 'Devices on the channel now.' },
  device_count_estimated: ESTIMATED,
});

export const Group = object({ id: UUID, name: { type: 'string' }, created_at: TIME, member_count: { ...COUNT, description: 'Devices in the group now.' }, member_count_estimated: ESTIMATED });

export const GroupMembersChanged = object({
  added: { ...COUNT, description: 'Devices of `add` that are members now.' },
  removed: { ...COUNT, description: 'Devices of `remove` that are no longer members.' },
  missing_device_ids: { type: 'array', items: UUID, description: 'Ids that name no device of the project: nothing was done for them.' },
});

export const MembershipChange = object({
  id: UUID,
  group_id: UUID,
  action: { type: 'string', enum: ['add', 'remove'] },
  matching: {
    type: 'object',
    additionalProperties: false,
    properties: { active: { type: 'boolean' }, group_id: UUID, channel_id: UUID, chip_family: { type: 'string' }, search: { type: 'string' } },
    description: 'The selection, as it was asked for.',
  },
  state: { type: 'string', enum: ['running', 'done', 'failed'], description: '`failed` says why in `detail`; what it changed before stays changed.' },
  share_done: { type: 'number', minimum: 0, maximum: 1, description: 'The share of the project walked so far.' },
  devices_expected: { ...COUNT, description: 'Matching devices when the change started (estimated in a large project, as the device list counts them).' },
  devices_matched: { ...COUNT, description: 'Matching devices found so far.' },
  added: { ...COUNT, description: 'Devices that became members (a member already is not counted).' },
  removed: { ...COUNT, description: 'Devices that stopped being members.' },
  created_at: TIME,
  finished_at: NULLABLE_TIME,
  detail: { type: 'string', description: 'Why a failed change stopped; empty otherwise.' },
});

export const MembershipImpact = object({
  group: object({ id: UUID, name: { type: 'string' } }),
  deployments: {
    type: 'array',
    description: 'Each active or paused deployment that targets the group, and the devices the change would give it and take from it.',
    items: object({
      id: UUID,
      build_number: { type: 'integer' },
      version_label: { type: 'string' },
      state: { type: 'string', enum: ['active', 'paused'] },
      rollout_percentage: { type: 'integer' },
      gains: { ...COUNT, description: 'Devices it would newly target (not only offered: its percentage still applies).' },
      gains_on_earlier_builds: { ...COUNT, description: "Of those, the ones on an earlier build than the deployment's: a device on its build or a later one is never offered it." },
      loses: { ...COUNT, description: 'Devices it would no longer target.' },
    }),
  },
});

export const ChipFamilyCount = object({ chip_family: { type: 'string', description: 'As the devices reported it; empty for devices that never did.' }, devices: COUNT, estimated: ESTIMATED });

export const Reach = object({ devices: { ...COUNT, description: 'Devices a deployment with these targets would reach now, at any percentage.' }, estimated: ESTIMATED });

const tokenFields = {
  id: UUID,
  name: { type: 'string' },
  prefix: { type: 'string' },
  scope: { type: 'string', enum: ['personal', 'api', 'device'] },
  role: orNull(Role, 'An `api` project token\'s role in its project (docs/api.md, "Roles"); null for the other kinds.'),
  created_at: TIME,
  created_by: {
    description: 'The person who made it, whose role in the project it never exceeds and whose removal revokes it (docs/security.md, "Tokens outlive no one"); null for tokens made before makers were recorded (counted as the owner\'s), and for personal tokens made by the admin command.',
    oneOf: [{ type: 'null' }, object({ user_id: UUID, email: { type: 'string' } })],
  },
  expires_at: { ...NULLABLE_TIME, description: 'When it stops working; null: never.' },
  single_sign_on: { type: 'boolean', description: 'Made in a single sign-on session: it works while the identity provider vouches for its person.' },
  last_used_at: NULLABLE_TIME,
  revoked_at: NULLABLE_TIME,
};
export const Token = object(tokenFields);
export const SignedOut = object({
  provider_logout_url: { type: 'string', description: "The identity provider's end-session address: send the browser there to end the person's session at the provider too." },
});
export const TokenCreated = object({ ...tokenFields, token: { type: 'string' } });

export const DeviceToken = object({ token: { type: 'string' }, prefix: { type: 'string' }, created_at: TIME });

const deviceFields = {
  id: UUID,
  device_id: { type: 'string' },
  framework: { type: 'string' },
  chip_family: { type: 'string' },
  board_id: { type: 'string' },
  hardware_revision: { type: 'string' },
  partition_profile: { type: 'string' },
  nvs_schema_version: { type: ['integer', 'null'] },
  security_mode: { type: 'string' },
  chip_revision: { type: ['integer', 'null'], description: 'major × 100 + minor, as the device last reported it; null when it never did.' },
  secure_version: { type: ['integer', 'null'], description: 'The eFuse anti-rollback version the device last reported; null when it never did.' },
  current_build_number: { type: 'integer' },
  current_version_label: { type: 'string' },
  current_hash: { type: 'string' },
  last_ota_status: { type: 'string' },
  last_ota_reason: { type: 'string' },
  active: { type: 'boolean' },
  last_seen: NULLABLE_TIME,
  last_check_at: NULLABLE_TIME,
  last_check_status: { type: 'string' },
  check_state: { type: 'string', enum: ['never_seen', 'waiting_for_next_check', 'no_pending_check'] },
  channel_id: UUID,
  group_ids: { type: 'array', items: UUID },
  metadata: { type: 'object' },
  created_at: TIME,
  health: {
    description: 'The health the device\'s last check reported (docs/api.md, "Device health"), with the build it ran then; null when it reports none.',
    oneOf: [
      { type: 'null' },
      object({
        reset_reason: { type: 'string' },
        boots: { type: 'integer' },
        abnormal_boots: { type: 'integer' },
        uptime_seconds: { type: 'number' },
        min_free_heap: { type: ['integer', 'null'] },
        build_number: { type: 'integer' },
        reported_at: TIME,
      }),
    ],
  },
};
export const Device = object(deviceFields);
export const DeviceCreated = object({ ...deviceFields, token: { type: 'string' } });

export const EspImage = object({
  chip: { type: 'string', description: "The chip family the image header's chip id names (`esp32c3`); it equals the manifest's `chip_family`." },
  chip_id: { type: 'integer' },
  secure_version: { type: 'integer', description: 'The anti-rollback version (`esp_app_desc_t.secure_version`).' },
  version: { type: 'string' },
  project_name: { type: 'string' },
  idf_version: { type: 'string' },
  elf_sha256: { type: 'string', description: 'The SHA-256 of the ELF the image was made from, in hex.' },
  min_chip_revision: { type: 'integer', description: 'major × 100 + minor.' },
  max_chip_revision: { type: 'integer', description: 'major × 100 + minor; 0 and 65535 set no upper bound.' },
  min_efuse_block_revision: { type: 'integer' },
  max_efuse_block_revision: { type: 'integer' },
  hash_appended: { type: 'boolean', description: 'A SHA-256 of the image follows its checksum (and matched).' },
});

export const SecureVersionRaise = object({
  from: { type: 'integer', description: "The highest secure_version of the project's earlier builds for the chip (0 when none had one)." },
  to: { type: 'integer' },
  efuse_bits_left: { type: 'integer', description: "The chip's secure-version eFuse bits still unburnt once a device confirms this build." },
});

export const Artifact = object({
  id: UUID,
  build_number: { type: 'integer' },
  version_label: { type: 'string' },
  framework: { type: 'string' },
  chip_family: { type: 'string' },
  board_id: { type: 'string' },
  hardware_revision: { type: 'string' },
  partition_profile: { type: 'string' },
  min_nvs_schema_version: { type: ['integer', 'null'] },
  checksum_sha256: { type: 'string' },
  file_size: { type: 'integer' },
  security_mode: { type: 'string' },
  release_notes: { type: 'string' },
  signature: { type: 'string' },
  signing_key_id: { type: ['string', 'null'] },
  archived: { type: 'boolean' },
  image: { oneOf: [{ type: 'null' }, EspImage], description: 'What the binary says of itself when it is an ESP-IDF application image; null for other bytes.' },
  elf: { oneOf: [{ type: 'null' }, ArtifactElf], description: "The ELF the image was made from, once uploaded (PUT .../elf/): the build's core dumps are decoded with it." },
  sbom: { anyOf: [ArtifactSbom, { type: 'null' }], description: 'The build\'s SBOM, once uploaded (PUT .../sbom/; docs/api.md, "SBOMs").' },
  secure_version_raise: {
    oneOf: [{ type: 'null' }, SecureVersionRaise],
    description: "Set when the image's secure_version is above every earlier build of the project for its chip: a device that confirms it burns eFuse bits and never runs a lower version again.",
  },
  created_at: TIME,
});

export const SigningKey = object({
  id: UUID,
  name: { type: 'string' },
  public_key: { type: 'string' },
  fingerprint: { type: 'string' },
  created_at: TIME,
});

export const Guardrails = object({
  failure_threshold: { oneOf: [{ type: 'null' }, object({ percent: { type: 'number' }, min_finished: { type: 'integer' } })] },
  reason_limits: { type: 'array', items: object({ reason: { type: 'string' }, count: { type: 'integer' }, window_seconds: { type: 'integer' } }) },
  confirm_timeout_seconds: { type: ['integer', 'null'] },
  health_regression: {
    description: 'The health guardrail with every field filled in; null without it.',
    oneOf: [
      { type: 'null' },
      object({ margin_percent: { type: 'number' }, significance: { type: 'number' }, min_devices: { type: 'integer' }, min_device_hours: { type: 'number' } }),
    ],
  },
});

const HealthFigures = object({
  devices: { ...COUNT, description: 'Devices counted on this side since the start: installs of the build (updated), or devices on an earlier build reporting since before the start (previous).' },
  device_hours: { type: 'number', minimum: 0, description: 'Hours run, summed over the devices, as they reported them.' },
  abnormal_resets: { ...COUNT, description: 'Boots after a panic, a watchdog, a brownout or a CPU lockup.' },
  resets_per_1000_device_hours: { type: ['number', 'null'], minimum: 0, description: 'abnormal_resets per 1,000 device_hours; null before any hour.' },
});

export const DeploymentHealth = object({
  judging: { type: 'boolean', description: 'The guardrail judges the figures now: the deployment is active and each side has its min_devices and min_device_hours.' },
  not_judging_because: { type: ['string', 'null'], description: 'Why it does not, in words (which side lacks how many devices or hours); null while it judges.' },
  judged_since: { ...NULLABLE_TIME, description: 'The hours and resets the guardrail judges began here (the last resume from a guardrail pause); null: since the start.' },
  period_minutes: { type: 'integer', description: 'The length of each period.' },
  updated: { ...HealthFigures, description: 'Devices running the deployment\'s build, summed since judged_since.' },
  previous: { ...HealthFigures, description: 'Targeted devices still on an earlier build, summed since judged_since.' },
  periods: {
    type: 'array',
    description: 'Oldest first, each period that counted anything.',
    items: object({ start: TIME, updated: HealthFigures, previous: HealthFigures }),
  },
});

const DEPLOYMENT_STATE = { type: 'string', enum: ['draft', 'active', 'paused', 'completed', 'cancelled'] } as const;

const DEPLOYMENT_PROPERTIES = {
  id: UUID,
  project_id: UUID,
  artifact_id: UUID,
  build_number: { type: 'integer' },
  version_label: { type: 'string' },
  state: DEPLOYMENT_STATE,
  target_group_ids: { type: 'array', items: UUID },
  target_channel_ids: { type: 'array', items: UUID },
  rollout_percentage: { type: 'integer', minimum: 0, maximum: 100 },
  rollout_strategy: { type: 'string' },
  version: { type: 'integer', minimum: 1, description: 'Grows by one with every transition; the `ETag` of the deployment, and what a transition\'s `If-Match` names.' },
  notes: { type: 'string' },
  failure_count: { type: 'integer' },
  created_at: TIME,
  started_at: NULLABLE_TIME,
  updated_at: TIME,
  guardrails: Guardrails,
  stages: { type: 'array', items: object({ percentage: { type: 'integer' }, min_wait_seconds: { type: 'integer' }, approval_required: { type: 'boolean' } }) },
  stage: {
    description: 'Where a staged deployment stands; null without stages. next_stage_at is when the current stage\'s wait ends (null at the last stage or before the start).',
    oneOf: [
      { type: 'null' },
      object({ index: { type: 'integer' }, entered_at: NULLABLE_TIME, next_stage_at: NULLABLE_TIME, next_stage_needs_approval: { type: 'boolean' } }),
    ],
  },
  guardrail_pause: {
    description: 'Why a guardrail paused the deployment, with the figures it saw; null unless a guardrail holds it paused (a resume clears it).',
    oneOf: [
      { type: 'null' },
      object({
        guardrail: { type: 'string', enum: ['failure_threshold', 'reason_limit', 'health_regression'] },
        detail: { type: 'string' },
        figures: { type: 'object', additionalProperties: { type: 'integer' } },
        at: TIME,
      }),
    ],
  },
  caps: {
    description: 'How fast the deployment may start updates (docs/api.md, "Offer caps"); null: no cap. A field null: no such cap.',
    oneOf: [{ type: 'null' }, object({ offers_per_minute: { type: ['integer', 'null'] }, max_in_progress: { type: ['integer', 'null'] } })],
  },
  maintenance_windows: {
    description: 'The weekly windows in which the deployment offers its build; null: at any time.',
    oneOf: [
      { type: 'null' },
      object({
        time_zone: { type: 'string' },
        in_device_local_time: { type: 'boolean' },
        windows: { type: 'array', items: object({ days: { type: 'array', items: { type: 'string' } }, start: { type: 'string' }, duration_minutes: { type: 'integer' } }) },
      }),
    ],
  },
} as const;

export const Deployment = object(DEPLOYMENT_PROPERTIES);

export const BuildHold = object({
  deployment_id: UUID,
  kind: { type: 'string', enum: ['guardrail_pause', 'approval_gate'] },
  detail: { type: 'string' },
});

export const TransitionedDeployment = object({
  ...DEPLOYMENT_PROPERTIES,
  overridden_holds: {
    type: 'array',
    items: BuildHold,
    description: 'The holds on the build this transition went around with `override_holds` (docs/api.md, "Holds on a build"); empty for most.',
  },
});

const ROLLOUT_STATUS = { type: 'string', enum: ROLLOUT_STATUSES } as const;

export const DeviceState = object({
  device_id: UUID,
  status: ROLLOUT_STATUS,
  reason: { type: 'string' },
  updated_at: TIME,
});

/** What holds devices not yet offered back now: the summary's and the preview's. */
export const HeldNow = object(
  {
    window_opens_at: {
      ...NULLABLE_TIME,
      description: "The deployment's maintenance windows are closed now (read in its time_zone): every device it would offer waits until then. Null: open, or no windows.",
    },
    caps_room: {
      type: ['integer', 'null'],
      minimum: 0,
      description: "How many new offers the deployment's caps let start now, for the whole deployment: the rest wait for room. Null: no caps.",
    },
  },
  [],
);

export const DeploymentSummary = object({
  deployment_id: UUID,
  state: DEPLOYMENT_STATE,
  rollout_percentage: { type: 'integer' },
  targeted_devices: { ...COUNT, description: 'Devices the targets reach now (groups and channels, any percentage).' },
  targeted_devices_estimated: ESTIMATED,
  devices_by_status: {
    type: 'object',
    additionalProperties: false,
    required: [...ROLLOUT_STATUSES],
    properties: Object.fromEntries(ROLLOUT_STATUSES.map((status) => [status, COUNT])),
    description: 'Devices per current rollout status. `pending`: targeted devices with no state record yet (not offered, outside the percentage, or not checked since).',
  },
  failure_count: COUNT,
  failures_by_reason: {
    type: 'array',
    items: object({ reason: { type: ['string', 'null'] }, count: COUNT }),
    description: 'The failures of `failure_count` by `reason`, most first; `null` for failures reported without one.',
  },
  deferred_devices: { ...COUNT, description: 'Devices that deferred the offer (the `deferred` event) to a time still ahead; no failure and no status.' },
  deferred_until: { ...NULLABLE_TIME, description: 'The latest time those devices deferred to; null when none is deferred.' },
  held_now: HeldNow,
});

export const DeploymentPreview = object({
  deployment_id: UUID,
  id_prefix: { type: 'string', description: 'The part of the fleet previewed: the devices whose `id` begins with it (empty: every device).' },
  state: DEPLOYMENT_STATE,
  as_if_active: { type: 'boolean', description: 'True when the deployment is not active and was previewed as if started or resumed now.' },
  rollout_percentage: { type: 'integer', description: 'The percentage the preview assumed.' },
  device_count: { ...COUNT, description: "The devices previewed (the project's, or the part's with `id_prefix`); the outcomes' counts add up to it." },
  outcomes: {
    type: 'object',
    additionalProperties: false,
    required: [...PREVIEW_OUTCOMES],
    properties: Object.fromEntries(PREVIEW_OUTCOMES.map((outcome) => [outcome, object({ count: COUNT, device_ids: { type: 'array', maxItems: 20, items: { type: 'string' } } })])),
  },
  held_now: HeldNow,
});

export const DeviceEvent = object({
  id: UUID,
  deployment_id: UUID,
  event: { type: 'string', description: 'As the device sent it (the legacy `rebooted` included).' },
  status: ROLLOUT_STATUS,
  build_number: { type: ['integer', 'null'] },
  reason: { type: ['string', 'null'] },
  detail: { type: ['object', 'null'] },
  created_at: TIME,
  deferred_until: { ...NULLABLE_TIME, description: 'A `deferred` report\'s time to be offered again; null for any other event.' },
});

export const Release = object({
  artifact_id: UUID,
  build_number: { type: 'integer' },
  deployment_id: UUID,
  state: { type: 'string' },
  channel: { type: 'string' },
});

export const Decision = object({
  id: { type: 'string' },
  project_id: UUID,
  device_id: { type: 'string' },
  created_at: TIME,
  decision: { type: 'string', enum: ['offered', 'no_update'] },
  status: { type: 'string', enum: CHECK_STATUSES },
  deployment_id: { type: ['string', 'null'] },
  artifact_build_number: { type: ['integer', 'null'] },
  reported_build_number: { type: ['integer', 'null'] },
  reported_version: { type: 'string' },
  message: { type: 'string' },
});

export const AuditEvent = object({
  id: UUID,
  project_id: UUID,
  action: { type: 'string' },
  actor_type: { type: 'string', enum: ['user', 'project_token', 'system'] },
  actor_id: { type: 'string' },
  actor_email: { type: ['string', 'null'], description: "The acting user's e-mail (`actor_type` user); null for tokens and the system." },
  token_prefix: { type: 'string' },
  actor_role: orNull(Role, 'The role the actor acted with (docs/api.md, "Roles"); null for the system and for events recorded before roles.'),
  actor_via: orNull(SignInVia, 'How the actor signed in; null for the system and for events recorded before roles.'),
  target_type: { type: 'string' },
  target_id: { type: 'string' },
  created_at: TIME,
  details: { type: 'object' },
});

/** An offer: a build to download. `status` is always `offered`, which tells it from CheckNoUpdate. */
export const CheckOffer = object(
  {
    status: { type: 'string', const: 'offered' },
    update_available: { type: 'boolean', const: true },
    build_number: { type: 'integer' },
    version: { type: 'string' },
    url: {
      type: 'string',
      format: 'uri',
      description:
        "Where to GET the build, with `Range` to resume; valid for OTA_URL_TTL_SECONDS. The gateway's own signed download endpoint by default, or a presigned object-storage URL where the operator set DOWNLOAD_URLS=presigned. Treat it as opaque.",
    },
    checksum: { type: 'string' },
    size: { type: 'integer' },
    deployment_id: UUID,
    security_mode: { type: 'string' },
    signature: { type: 'string' },
    signing_key_id: UUID,
    poll_after_seconds: { type: 'integer' },
    patch: {
      ...object({
        url: { type: 'string', format: 'uri', description: 'Where to GET the patch, signed, ranged and resumable exactly like `url`, and refused in the same cases.' },
        size: { type: 'integer', description: "The patch's bytes." },
        sha256: { type: 'string', description: "The patch's SHA-256." },
        base_sha256: { type: 'string', description: 'The image the patch applies to: the `current_hash` the device sent.' },
        format: { type: 'string', description: 'One of the `delta_formats` the device sent.' },
      }),
      description:
        "Present only when the check sent `delta_formats` and `current_hash` and a patch from that image to this build is ready (docs/api.md, \"Delta patches\"). Applied to the running image it gives the build's bytes: the result is checked against `checksum` and `signature` as a full download is. `url` stays the fallback.",
    },
  },
  ['signature', 'signing_key_id', 'poll_after_seconds', 'patch'],
);

const NO_UPDATE_STATUSES = CHECK_STATUSES.filter((status) => status !== 'offered');

/** No update: why, in `status`. */
export const CheckNoUpdate = object(
  {
    update_available: { type: 'boolean', const: false },
    status: { type: 'string', enum: NO_UPDATE_STATUSES },
    message: { type: 'string' },
    poll_after_seconds: { type: 'integer' },
    window_opens_at: { ...TIME, description: "The build waits for its deployment's next maintenance window, which opens then (status not_in_rollout): poll_after_seconds is at most the time until it." },
    deferred_until: { ...TIME, description: 'The device deferred the offer until then (status not_in_rollout): poll_after_seconds is at most the time until it.' },
    patch_wait_until: {
      ...TIME,
      description:
        'The build is offered, and a delta patch to it from the image the device runs is being made (status not_in_rollout): the device checks again after poll_after_seconds; from this time on it is offered the build whether or not the patch is ready (docs/api.md, "Delta patches").',
    },
  },
  ['poll_after_seconds', 'window_opens_at', 'deferred_until', 'patch_wait_until'],
);

/** The check's answer; `status` tells its two shapes apart (a discriminator code generators follow). */
export const CheckResponse = {
  oneOf: [CheckOffer, CheckNoUpdate],
  discriminator: {
    propertyName: 'status',
    mapping: { offered: '#/components/schemas/CheckOffer', ...Object.fromEntries(NO_UPDATE_STATUSES.map((status) => [status, '#/components/schemas/CheckNoUpdate'])) },
  },
} as const;

export const StatusResponse = object({ accepted: { type: 'boolean' }, final_status: { type: 'string' } });

export const OfferStandingAnswer = object(
  {
    standing: { type: 'boolean', description: 'The offer stands: go on downloading, and install.' },
    status: { type: 'string', enum: STOP_STATUSES, description: 'Why it no longer stands; absent while it stands.' },
    hold: { type: 'boolean', description: 'Keep the bytes and check again later, to resume from them (a pause); false: abandon the download.' },
    message: { type: 'string' },
  },
  ['status', 'hold', 'message'],
);

export const arrayOf = (items: object) => ({ type: 'array', items }) as const;
