// Answers about what a build holds and where it runs: its delta patches, how its images reached devices, which
// builds the fleet runs, its SBOM, the exposure to a component and the vulnerabilities recorded
// (docs/api.md, "Delta patches", "Fleet builds", "SBOMs", "Exposure", "Vulnerabilities").
import { COUNT, object, TIME, UUID } from './schema-building';

export const Patch = object({
  id: { type: 'string', description: 'One per project, base bytes, target bytes and format.' },
  base_artifact_id: UUID,
  target_artifact_id: UUID,
  base_sha256: { type: 'string' },
  target_sha256: { type: 'string' },
  format: { type: 'string', description: '`detools-sequential-heatshrink-8-7`: what ESP-IDF\'s esp_delta_ota applies.' },
  state: { type: 'string', enum: ['queued', 'building', 'ready', 'failed'] },
  reason: { type: 'string', description: 'Why it failed; empty otherwise.' },
  size: { type: 'integer', description: 'The patch\'s bytes, once ready; 0 before.' },
  sha256: { type: 'string', description: 'The patch\'s SHA-256, once ready; empty before.' },
  attempts: { type: 'integer' },
  created_at: TIME,
  updated_at: TIME,
});

const NULLABLE_TEXT = { type: ['string', 'null'] } as const;

export const ArtifactSbom = object({
  sha256: { type: 'string', description: "The document's SHA-256, as uploaded." },
  size: COUNT,
  format: { type: 'string', enum: ['spdx-2.2-tag-value', 'spdx-2.3-tag-value', 'spdx-2.2-json', 'spdx-2.3-json', 'spdx-3.0.1-json-ld', 'cyclonedx-1.5-json', 'cyclonedx-1.6-json'] },
  components: { ...COUNT, description: 'The components (packages) it lists.' },
  uploaded_at: TIME,
});

export const Downloads = object({
  patched: { type: 'integer', description: 'Devices whose image came as a delta patch they applied.' },
  whole: { type: 'integer', description: 'Devices that downloaded the whole image.' },
  fell_back: { type: 'integer', description: 'Devices that gave a patch up and downloaded the whole image.' },
  patch_bytes: { type: 'integer', description: 'The bytes of the patches applied, as the devices reported them.' },
  build_bytes: { type: 'integer', description: "The build's size." },
  bytes_saved: { type: 'integer', description: 'What the patches spared the devices: `patched` times `build_bytes`, less `patch_bytes`.' },
});

const FLEET_POINT = object({
  at: TIME,
  builds: {
    type: 'array',
    description: 'Active devices per build they run, lowest build first; builds no device runs are left out (0: devices that confirmed no build yet).',
    items: object({ build_number: { type: 'integer', minimum: 0 }, devices: COUNT }),
  },
});

export const FleetBuilds = object({
  now: FLEET_POINT,
  history: { type: 'array', items: FLEET_POINT, description: 'The snapshots, oldest first.' },
});

export const Exposure = object({
  builds: {
    type: 'array',
    description: 'Each build whose SBOM lists the component within the versions, with the active devices that run it now; lowest build first.',
    items: object({
      artifact_id: UUID,
      build_number: { type: 'integer' },
      version_label: { type: 'string' },
      component: object({ name: { type: 'string' }, version: { type: 'string' }, purl: { type: 'string' } }),
      devices: COUNT,
    }),
  },
  devices: { ...COUNT, description: 'Active devices that run one of those builds now.' },
  unknown: object({
    builds: { type: 'array', description: 'Builds without an SBOM that active devices run.', items: object({ artifact_id: UUID, build_number: { type: 'integer' }, devices: COUNT }) },
    devices: { ...COUNT, description: 'Active devices on those builds.' },
    never_updated: { ...COUNT, description: 'Active devices that confirmed no build of the project: what they run is not known here.' },
  }),
  deployments: {
    type: 'array',
    description: 'Active or paused deployments of builds that do not list the component (`without_component`), or have no SBOM to say (`without_sbom`); lowest build first.',
    items: object({
      deployment_id: UUID,
      build_number: { type: 'integer' },
      state: { type: 'string', enum: ['active', 'paused'] },
      rollout_percentage: { type: 'integer' },
      target: { type: 'string', enum: ['without_component', 'without_sbom'] },
    }),
  },
});

export const Vulnerability = object({
  id: { type: 'string', description: 'The advisory id: CVE-… or GHSA-…' },
  component: object({ name: NULLABLE_TEXT, purl: NULLABLE_TEXT, cpe: NULLABLE_TEXT }),
  versions: { type: ['string', 'null'], description: 'The affected versions; null: every version.' },
  summary: { type: 'string' },
  known_at: TIME,
  recorded_at: TIME,
  exposure_when_recorded: object({
    builds: { type: 'array', items: object({ artifact_id: UUID, build_number: { type: 'integer' }, component_version: { type: 'string' }, devices: COUNT }) },
    devices: COUNT,
  }),
  statements: {
    type: 'array',
    description: 'VEX statements per build, lowest build first.',
    items: object({
      artifact_id: UUID,
      build_number: { type: 'integer' },
      status: { type: 'string', enum: ['affected', 'not_affected', 'fixed', 'under_investigation'] },
      justification: { type: ['string', 'null'] },
      note: { type: 'string' },
      stated_at: TIME,
    }),
  },
});

export const VulnerabilityReport = object({
  id: { type: 'string' },
  known_at: TIME,
  recorded_at: TIME,
  affected_builds: { type: 'array', description: 'As the SBOMs and the VEX statements say now, lowest first.', items: object({ artifact_id: UUID, build_number: { type: 'integer' } }) },
  devices_when_recorded: COUNT,
  devices_now: COUNT,
  unknown_now: object({
    builds: { type: 'array', items: object({ artifact_id: UUID, build_number: { type: 'integer' }, devices: COUNT }) },
    devices: COUNT,
    never_updated: COUNT,
  }),
  fix: {
    anyOf: [object({ build_number: { type: 'integer' }, deployment_id: UUID, state: { type: 'string', enum: ['active', 'paused'] }, rollout_percentage: { type: 'integer' } }), { type: 'null' }],
    description: 'The first active or paused deployment of a build above every affected one that does not list the component; null: none yet.',
  },
  devices_per_day: { type: 'array', items: object({ day: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'A UTC day.' }, devices: COUNT }) },
});
