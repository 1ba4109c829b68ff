import { isDomainError } from '@ota/errors';
import { decideOffer } from './decide';
import type { ArtifactSummary, DecisionDeployment, DecisionDevice } from './model';

/** Active, build 5 (artifact-1), on channel `stable`, at 100%. */
const deployment = (overrides: Partial<DecisionDeployment> = {}): DecisionDeployment => ({
  id: 'deployment-1',
  projectId: 'p',
  artifactId: 'artifact-1',
  state: 'active',
  targetGroupIds: [],
  targetChannelIds: ['stable'],
  rolloutPercentage: 100,
  createdAt: new Date(1_000),
  startedAt: new Date(2_000),
  ...overrides,
});

/** Build 5 for esp_idf on esp32, no other dimension declared. */
const artifact = (overrides: Partial<ArtifactSummary> = {}): ArtifactSummary => ({
  id: 'artifact-1',
  projectId: 'p',
  buildNumber: 5,
  versionLabel: '1.5.0',
  framework: 'esp_idf',
  chipFamily: 'esp32',
  boardId: '',
  hardwareRevision: '',
  partitionProfile: '',
  minNvsSchemaVersion: null,
  securityMode: '',
  checksumSha256: 'c',
  fileSize: 10,
  archived: false,
  signature: '',
  signingKeyId: '',
  storageKey: '',
  image: null,
  ...overrides,
});

const device = (overrides: Partial<DecisionDevice> = {}): DecisionDevice => ({
  id: 'device-1',
  channelId: 'stable',
  groupIds: [],
  framework: 'esp_idf',
  chipFamily: 'esp32',
  currentBuildNumber: 0,
  ...overrides,
});

function decide(input: { device?: DecisionDevice; deployments?: DecisionDeployment[]; artifacts?: ArtifactSummary[]; rolledBack?: string[]; at?: Date }) {
  const artifacts = new Map((input.artifacts ?? [artifact()]).map((a) => [a.id, a]));
  return decideOffer({
    device: input.device ?? device(),
    activeDeployments: input.deployments ?? [deployment()],
    artifactOf: (id) => artifacts.get(id),
    rolledBack: new Set(input.rolledBack ?? []),
    at: input.at,
  });
}

describe('decideOffer', () => {
  it('offers the targeted compatible build', () => {
    expect(decide({})).toMatchObject({ status: 'offered', artifact: { buildNumber: 5 } });
  });

  it('answers no_active_deployment when nothing targets the device', () => {
    expect(decide({ device: device({ channelId: 'beta' }) }).status).toBe('no_active_deployment');
    expect(decide({ deployments: [] }).status).toBe('no_active_deployment');
  });

  it('requires a group and a channel match when both lists are set', () => {
    const both = deployment({ targetGroupIds: ['g1'], targetChannelIds: ['stable'] });
    expect(decide({ deployments: [both] }).status).toBe('no_active_deployment');
    expect(decide({ deployments: [both], device: device({ groupIds: ['g1'] }) }).status).toBe('offered');
  });

  it.each([
    ['another chip', { chipFamily: 'esp32c3' }, {}],
    ['an archived build', {}, { archived: true }],
    ['another partition profile', { partitionProfile: 'ota_4mb' }, { partitionProfile: 'ota_8mb' }],
    ['an older NVS schema', { nvsSchemaVersion: 1 }, { minNvsSchemaVersion: 2 }],
    ['another security mode', { securityMode: 'basic' }, { securityMode: 'signed' }],
    ['another board', { boardId: 'devkit' }, { boardId: 'custom' }],
  ])('answers no_compatible_build for %s', (_name, deviceFields, artifactFields) => {
    expect(decide({ device: device(deviceFields), artifacts: [artifact(artifactFields)] }).status).toBe('no_compatible_build');
  });

  describe("the device's bootloader", () => {
    // An ESP32-C3 image for chip revisions v0.3 to v1.99, anti-rollback version 2.
    const imaged = (overrides: Partial<NonNullable<ArtifactSummary['image']>> = {}) =>
      artifact({ image: { minChipRevision: 3, maxChipRevision: 199, secureVersion: 2, ...overrides } });

    it.each([
      ['a revision below the range', { chipRevision: 2 }, 'chip_revision_unsupported'],
      ['a revision above the range', { chipRevision: 200 }, 'chip_revision_unsupported'],
      ['an eFuse secure version above the image\'s', { secureVersion: 3 }, 'secure_version_too_low'],
      ['a revision in the range and an equal secure version', { chipRevision: 3, secureVersion: 2 }, 'offered'],
      ['the top of the range and a lower secure version', { chipRevision: 199, secureVersion: 0 }, 'offered'],
      ['neither reported', {}, 'offered'],
    ] as const)('answers a device that reports %s', (_name, deviceFields, status) => {
      const decision = decide({ device: device(deviceFields), artifacts: [imaged()] });
      expect(decision.status).toBe(status);
      if (status !== 'offered') expect(decision.message).toContain('bootloader would refuse');
    });

    it('reads a maximum of 0 or 65535 as no upper bound, as ESP-IDF does', () => {
      for (const maxChipRevision of [0, 65535]) {
        expect(decide({ device: device({ chipRevision: 305 }), artifacts: [imaged({ maxChipRevision })] }).status).toBe('offered');
      }
    });

    it('offers a lower build the bootloader accepts when a higher one is refused', () => {
      const refused = deployment({ id: 'd-new', artifactId: 'a-7' });
      const accepted = deployment({ id: 'd-old', artifactId: 'a-5' });
      const artifacts = [
        artifact({ id: 'a-7', buildNumber: 7, image: { minChipRevision: 100, maxChipRevision: 199, secureVersion: 2 } }),
        artifact({ id: 'a-5', buildNumber: 5, image: { minChipRevision: 3, maxChipRevision: 199, secureVersion: 2 } }),
      ];
      expect(decide({ deployments: [refused, accepted], artifacts, device: device({ chipRevision: 4 }) })).toMatchObject({ status: 'offered', deployment: { id: 'd-old' } });
    });

    it('judges a build without an image as before, whatever the device reports', () => {
      expect(decide({ device: device({ chipRevision: 1, secureVersion: 9 }) }).status).toBe('offered');
    });

    it('answers no_compatible_build before it looks at the image, for other hardware', () => {
      expect(decide({ device: device({ chipFamily: 'esp32c3', chipRevision: 1 }), artifacts: [imaged()] }).status).toBe('no_compatible_build');
    });
  });

  it('lets blank or omitted device values match declared dimensions', () => {
    const declared = artifact({ partitionProfile: 'ota_8mb', minNvsSchemaVersion: 3, securityMode: 'signed' });
    expect(decide({ artifacts: [declared] }).status).toBe('offered');
  });

  it('refuses a request that omits a board_id a targeted build declares', () => {
    let error: unknown;
    try {
      decide({ artifacts: [artifact({ boardId: 'custom' })] });
    } catch (caught) {
      error = caught;
    }
    expect(isDomainError(error, 'InvalidArgument')).toBe(true);
    expect((error as Error).message).toContain('board_id');
  });

  it('answers up_to_date when the device runs the build, and not_in_rollout outside the cohort', () => {
    expect(decide({ device: device({ currentBuildNumber: 5 }) }).status).toBe('up_to_date');
    expect(decide({ deployments: [deployment({ rolloutPercentage: 0 })] }).status).toBe('not_in_rollout');
    expect(decide({ deployments: [deployment({ rolloutPercentage: 0 })], device: device({ currentBuildNumber: 9 }) }).status).toBe('up_to_date');
  });

  it('takes the highest build, and the latest-started deployment on a tie', () => {
    const older = deployment({ id: 'd-old', artifactId: 'a-5', startedAt: new Date(1) });
    const newer = deployment({ id: 'd-new', artifactId: 'a-5', startedAt: new Date(5) });
    const higher = deployment({ id: 'd-high', artifactId: 'a-7', startedAt: new Date(0) });
    const artifacts = [artifact({ id: 'a-5', buildNumber: 5 }), artifact({ id: 'a-7', buildNumber: 7 })];
    expect(decide({ deployments: [older, newer], artifacts })).toMatchObject({ deployment: { id: 'd-new' } });
    expect(decide({ deployments: [older, higher, newer], artifacts })).toMatchObject({ deployment: { id: 'd-high' } });
  });

  it('offers in the deployment\'s maintenance window only, and says when the next opens', () => {
    // Mondays 02:00 to 04:00 in Berlin (UTC+1 in winter); 2026-11-30 is a Monday.
    const windowed = deployment({ maintenance: { timeZone: 'Europe/Berlin', inDeviceLocalTime: false, windows: [{ days: ['mon'], start: '02:00', durationMinutes: 120 }] } });
    expect(decide({ deployments: [windowed], at: new Date('2026-11-30T01:00:00Z') })).toMatchObject({ status: 'offered' });
    const held = decide({ deployments: [windowed], at: new Date('2026-11-30T03:00:00Z') });
    expect(held).toMatchObject({ status: 'not_in_rollout', windowOpensAt: new Date('2026-12-07T01:00:00Z') });
    expect(held.message).toContain('2026-12-07T01:00:00.000Z');
    // A device that already runs the build is up to date whatever the hour; a preview (no time) looks at no window.
    expect(decide({ deployments: [windowed], device: device({ currentBuildNumber: 5 }), at: new Date('2026-11-30T03:00:00Z') }).status).toBe('up_to_date');
    expect(decide({ deployments: [windowed] }).status).toBe('offered');
  });

  it('does not offer a deployment the device deferred before the time it gave, and offers it after; other deployments are not held', () => {
    const deferral = { deploymentId: 'deployment-1', until: new Date('2026-12-01T00:00:00Z') };
    const held = decide({ device: device({ deferral }), at: new Date('2026-11-30T12:00:00Z') });
    expect(held).toMatchObject({ status: 'not_in_rollout', deferredUntil: deferral.until });
    expect(held.message).toContain('deferred this update until 2026-12-01T00:00:00.000Z');
    expect(decide({ device: device({ deferral }), at: new Date('2026-12-01T00:00:00Z') }).status).toBe('offered');
    expect(decide({ device: device({ deferral: { ...deferral, deploymentId: 'another' } }), at: new Date('2026-11-30T12:00:00Z') }).status).toBe('offered');
  });

  it('does not offer a deployment the device rolled back', () => {
    expect(decide({ rolledBack: ['deployment-1'] }).status).toBe('not_in_rollout');
  });
});
