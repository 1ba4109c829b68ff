import type { ArtifactSummary, DecisionDeployment } from '@ota/decision';
import { healthIncrement, healthSides, HealthTallies, type HealthSnapshot } from './device-health';

const snapshot = (build: number, boots: number, abnormalBoots: number, uptimeSeconds: number, at = new Date(0)): HealthSnapshot => ({ build, resetReason: 'software', boots, abnormalBoots, uptimeSeconds, at });
const DAY = new Date(86_400_000);
const CENTURY_SECONDS = 100 * 365.25 * 86_400;

test('an increment is the difference on one build, everything since an install, and nothing from a first report or counters that went down', () => {
  expect(healthIncrement(snapshot(6, 2, 0, 3_600), snapshot(6, 4, 1, 9_000, DAY))).toEqual({ seconds: 5_400, abnormalResets: 1, installed: false });
  expect(healthIncrement(snapshot(6, 9, 3, 90_000), snapshot(7, 2, 1, 1_800, DAY))).toEqual({ seconds: 1_800, abnormalResets: 1, installed: true });
  expect(healthIncrement(null, snapshot(7, 2, 1, 1_800))).toBeNull();
  expect(healthIncrement(snapshot(7, 5, 2, 9_000), snapshot(7, 1, 0, 60))).toBeNull();
});

test("a device's hours are bounded by the registry's clock since its previous report, and its resets by its boots", () => {
  const fiveSeconds = new Date(5_000);
  // A century claimed five seconds after the previous report is five seconds; so is an install's.
  expect(healthIncrement(snapshot(6, 1, 0, 60), snapshot(6, 2, 1, CENTURY_SECONDS, fiveSeconds))).toEqual({ seconds: 5, abnormalResets: 1, installed: false });
  expect(healthIncrement(snapshot(5, 1, 0, 60), snapshot(6, 1, 0, CENTURY_SECONDS, fiveSeconds))).toEqual({ seconds: 5, abnormalResets: 0, installed: true });
  // A firmware that reports milliseconds counts real time, not a thousand times it.
  expect(healthIncrement(snapshot(6, 1, 0, 60_000), snapshot(6, 1, 0, 65_000, fiveSeconds))?.seconds).toBe(5);
  // Falling and rising again adds no more than the clock saw.
  const fell = snapshot(6, 1, 0, 0, fiveSeconds);
  expect(healthIncrement(snapshot(6, 1, 0, CENTURY_SECONDS), fell)).toBeNull();
  expect(healthIncrement(fell, snapshot(6, 1, 0, CENTURY_SECONDS, new Date(10_000)))?.seconds).toBe(5);
  // Abnormal resets are at most the boots since, and one a second.
  expect(healthIncrement(snapshot(6, 1, 0, 60), snapshot(6, 3, 2, 70, fiveSeconds))?.abnormalResets).toBe(2);
  expect(healthIncrement(snapshot(6, 1, 0, 60), snapshot(6, 1_000_000, 999_999, 70, fiveSeconds))?.abnormalResets).toBe(6);
  // A simulated fleet's clock runs faster only when told to.
  expect(healthIncrement(snapshot(6, 1, 0, 0), snapshot(6, 2, 0, 7_200, new Date(1_000)), 3600)?.seconds).toBe(3_600);
});

const deployment = (id: string, overrides: Partial<DecisionDeployment> = {}): DecisionDeployment => ({
  id,
  projectId: 'p1',
  artifactId: `a-${id}`,
  state: 'active',
  targetGroupIds: [],
  targetChannelIds: ['stable'],
  rolloutPercentage: 5,
  createdAt: new Date(0),
  startedAt: new Date(10_000),
  watchesHealth: true,
  ...overrides,
});
const artifactOf = (buildNumber: number, chipFamily = 'esp32') => ({ buildNumber, framework: 'esp_idf', chipFamily, archived: false }) as ArtifactSummary;

test('a device counts on the updated side on the build, on the previous side below it, and nowhere else', () => {
  const device = { id: 'd', channelId: 'stable', groupIds: [], framework: 'esp_idf', chipFamily: 'esp32', currentBuildNumber: 7 };
  const deployments = [
    deployment('on-build'),
    deployment('later'),
    deployment('earlier'),
    deployment('unwatched', { watchesHealth: false }),
    deployment('other-channel', { targetChannelIds: ['beta'] }),
    deployment('other-chip'),
  ];
  const builds: Record<string, ArtifactSummary> = { 'a-on-build': artifactOf(7), 'a-later': artifactOf(9), 'a-earlier': artifactOf(5), 'a-unwatched': artifactOf(9), 'a-other-channel': artifactOf(9), 'a-other-chip': artifactOf(9, 'esp32c3') };
  const sides = healthSides(device, deployments, (id) => builds[id]);
  expect(sides.map(({ deployment: d, side }) => [d.id, side])).toEqual([
    ['on-build', 'updated'],
    ['later', 'previous'],
  ]);
});

test('tallies add up per deployment, side and 15-minute period, and count a device once per side', () => {
  const tallies = new HealthTallies();
  const watched = deployment('dep');
  const at = new Date(20 * 60_000);
  // A report from before the start counts the device on the previous side; a later one does not again.
  tallies.count([{ deployment: watched, side: 'previous' }], { seconds: 600, abnormalResets: 0, installed: false }, new Date(5_000), at);
  tallies.count([{ deployment: watched, side: 'previous' }], { seconds: 900, abnormalResets: 1, installed: false }, new Date(15_000), at);
  // An install counts the device on the updated side.
  tallies.count([{ deployment: watched, side: 'updated' }], { seconds: 300, abnormalResets: 2, installed: true }, new Date(15_000), new Date(31 * 60_000));
  expect(tallies.take()).toEqual([
    { projectId: 'p1', deploymentId: 'dep', side: 'previous', periodStart: new Date(15 * 60_000), deviceSeconds: 1_500, abnormalResets: 1, devices: 1 },
    { projectId: 'p1', deploymentId: 'dep', side: 'updated', periodStart: new Date(30 * 60_000), deviceSeconds: 300, abnormalResets: 2, devices: 1 },
  ]);
  expect(tallies.take()).toEqual([]);
});
