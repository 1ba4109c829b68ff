import { FleetHealth, simulate, simulateHours, type SimulationOptions } from '@ota/simulator';
import { MANIFEST, api, eventually, randomBinary, setupProject, testStack, uploadForm } from '@ota/testkit';

// The health guardrail (docs/api.md, "Device health") against the real services: 1,000 simulated
// devices check once per simulated hour with their health, under a staged plan whose first stage
// ramps itself to 100% after its wait. A build that confirms and then panics every two simulated
// hours must pause the deployment within its first stage (5%), a few simulated hours after the
// start; a build that resets as often as the rest of the fleet must not, and its plan goes on. The
// stack sends registry's counts to rollout every 500 ms and supervises every 500 ms
// (jest-global-setup.ts).

const FLEET = 1000;
/**
 * Only a guard against a hang: the healthy build's test takes about 190 s on a quiet two-core
 * machine, most of it the fleet installing the build once its plan ramps to 100%.
 */
const HANG_GUARD_MS = 600_000;
/**
 * The crash-looping build's first stage waits longer than the test may run. A simulated hour takes
 * several seconds of the machine's time, so with a shorter wait the plan's own ramp raced the
 * guardrail's judgement on the machine's speed: with a 45 s wait, a slow CI run saw the plan ramp
 * on (88 installs) before the third simulated hour was judged. How soon the guardrail pauses is
 * asserted in simulated hours instead. The stage holds 5%, as the healthy build's does: the
 * guardrail judges only once `min_devices` (20) devices run the build, and at 3% fewer than 20
 * came up in one run in 50 (one CI run saw no pause in 12 simulated hours).
 */
const CRASH_LOOP_STAGES = [
  { percentage: 5, min_wait_seconds: 3600 },
  { percentage: 100, min_wait_seconds: 0 },
];
/** A build that crash-loops every two hours is paused within this many simulated hours of its start (three on a quiet run). */
const HOURS_TO_PAUSE = 6;
/**
 * The healthy build's plan starts at 5% and ramps after 45 s: its test needs at least
 * `min_devices` (20) updated devices for the guardrail to judge, and which devices a percentage
 * takes follows the deployment's random id. At 3% of 1,000 devices, fewer than 20 come up in one
 * run in 50 (binomially; 17 in one CI run); at 5%, in one run in 3 million.
 */
const HEALTHY_STAGES = [
  { percentage: 5, min_wait_seconds: 45 },
  { percentage: 100, min_wait_seconds: 0 },
];

async function stagedDeployment(name: string, stages: Array<{ percentage: number; min_wait_seconds: number }>) {
  const f = await setupProject({ name, maxDevices: 0 });
  const options: SimulationOptions = {
    url: testStack().gatewayUrl,
    token: f.deviceScopeToken,
    devices: FLEET,
    prefix: `${name}-`,
    concurrency: 16,
    shares: { fail: 0, rollBack: 0, signatureInvalid: 0, silent: 0 },
    seed: name,
    framework: MANIFEST.framework,
    chipFamily: MANIFEST.chip_family,
  };
  const artifact = (await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(256)) })).body;
  const created = await api('POST', `/api/v1/projects/${f.project.id}/deployments/`, {
    token: f.user.token,
    json: { artifact_id: artifact.id, stages, guardrails: { health_regression: {} } },
  });
  expect(created.status).toBe(201);
  expect(created.body.guardrails.health_regression).toEqual({ margin_percent: 50, significance: 0.001, min_devices: 20, min_device_hours: 50 });
  const path = `/api/v1/projects/${f.project.id}/deployments/${created.body.id}/`;
  const read = async () => (await api('GET', path, { token: f.user.token })).body;
  const health = async () => (await api('GET', `${path}health/`, { token: f.user.token })).body;
  const start = async () => expect((await api('POST', `${path}transition/`, { token: f.user.token, json: { action: 'start', confirm_all: true } })).status).toBe(200);
  return { f, options, buildNumber: artifact.build_number as number, deploymentId: created.body.id as string, read, health, start };
}

/** The fleet checks once before the start (registering, and reporting the health the next checks are compared with), then runs an hour. */
async function warmUp(options: SimulationOptions, fleetHealth: FleetHealth) {
  const warm = await simulate({ ...options, health: fleetHealth });
  expect(warm.errors).toBe(0);
  expect(warm.statuses.no_active_deployment).toBe(FLEET);
  fleetHealth.advance(1);
  return warm.builds;
}

test('a build that confirms and then crash-loops pauses its staged rollout with health_regression within its first stage, a few simulated hours after the start', async () => {
  const { f, options, buildNumber, deploymentId, read, health, start } = await stagedDeployment('crash-loop', CRASH_LOOP_STAGES);
  const fleetHealth = new FleetHealth({ seed: 'crash-loop', abnormalPerHour: 0.01, crashLoops: new Map([[buildNumber, 2]]) });
  const fleet = await warmUp(options, fleetHealth);
  await start();

  let installed = 0;
  let paused: Record<string, any> | undefined;
  let pausedAfterHours = 0;
  await simulateHours({ ...options, fleet, health: fleetHealth }, 12, async (hour, summary) => {
    expect(summary.errors).toBe(0);
    installed += summary.confirmed;
    // What the hour's checks reported reaches rollout within a flush and a judgement.
    const deployment = await eventually(read, (d) => d.state === 'paused', 3_000);
    if (deployment.state === 'paused') [paused, pausedAfterHours] = [deployment, hour];
    return paused !== undefined;
  });

  expect(paused).toBeDefined();
  expect(pausedAfterHours).toBeLessThanOrEqual(HOURS_TO_PAUSE);
  // Only the first stage's devices installed it: about 50 of the 1,000, and 100 or more in fewer
  // than one run in a billion; had the plan gone on to 100%, nearly the whole fleet.
  expect(installed).toBeLessThan(FLEET * 0.1);
  // Paused at the first stage: the plan had not gone on.
  expect(paused!.stage.index).toBe(0);
  expect(paused!.guardrail_pause.guardrail).toBe('health_regression');
  expect(paused!.guardrail_pause.detail).toMatch(/reset abnormally/);
  const figures = paused!.guardrail_pause.figures as Record<string, number>;
  expect(figures.updated_devices).toBeGreaterThanOrEqual(20);
  expect(figures.updated_device_hours).toBeGreaterThanOrEqual(50);
  expect(figures.previous_devices).toBeGreaterThanOrEqual(900);
  expect(figures.updated_abnormal_resets / figures.updated_device_hours).toBeGreaterThan((10 * figures.previous_abnormal_resets) / figures.previous_device_hours);

  // The chart's figures say the same: the build's devices reset far more often per hour run.
  const judged = await health();
  expect(judged.period_minutes).toBe(15);
  expect(judged.updated.resets_per_1000_device_hours).toBeGreaterThan(10 * judged.previous.resets_per_1000_device_hours);
  expect(judged.periods.length).toBeGreaterThan(0);

  const audit = (await api('GET', `/api/v1/projects/${f.project.id}/audit/?limit=1000`, { token: f.user.token })).body as Array<Record<string, any>>;
  const pauses = audit.filter((event) => event.action === 'deployment.paused' && event.target_id === deploymentId);
  expect(pauses).toHaveLength(1);
  expect(pauses[0]).toMatchObject({ actor_type: 'system', details: { automatic: true, guardrail: 'health_regression' } });
}, HANG_GUARD_MS);

test('a build that resets as often as the rest of the fleet is judged and never paused, and its plan goes on', async () => {
  const { options, read, health, start } = await stagedDeployment('healthy-build', HEALTHY_STAGES);
  const fleetHealth = new FleetHealth({ seed: 'healthy-build', abnormalPerHour: 0.01 });
  const fleet = await warmUp(options, fleetHealth);
  await start();

  await simulateHours({ ...options, fleet, health: fleetHealth }, 8, async (_, summary) => {
    expect(summary.errors).toBe(0);
    expect((await read()).state).toBe('active');
  });
  // Both sides were past their minimums, so the guardrail judged, and found nothing.
  const judged = await eventually(health, (h) => h.updated.device_hours >= 50, 3_000);
  expect(judged.updated.devices).toBeGreaterThanOrEqual(20);
  expect(judged.updated.device_hours).toBeGreaterThanOrEqual(50);
  expect(judged.previous.devices).toBeGreaterThanOrEqual(900);
  // The plan ramps itself on once the first stage's wait is over.
  const ramped = await eventually(read, (d) => d.stage.index === 1, 60_000);
  expect(ramped).toMatchObject({ state: 'active', rollout_percentage: 100, guardrail_pause: null });
}, HANG_GUARD_MS);
