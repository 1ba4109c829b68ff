import { simulate, type SimulationOptions } from '@ota/simulator';
import { MANIFEST, api, eventually, makeEspImage, randomBinary, setupProject, testStack, uploadForm } from '@ota/testkit';

// A 1,000-device rollout driven by the fleet simulator: 10%, then a ramp to 100%, with 5% of the
// devices injected to fail. Afterwards the states, the failure counter and every device's build
// must match exactly what was injected.

it('rolls out to 1,000 devices at 10% then 100%, with 5% failing', async () => {
  const f = await setupProject({ name: 'fleet', maxDevices: 0 });
  const release = await api('POST', `/api/v1/projects/${f.project.id}/release/`, {
    token: f.user.token,
    body: uploadForm(MANIFEST, randomBinary(512), { rollout_percentage: '10' }),
  });
  const options: SimulationOptions = {
    url: testStack().gatewayUrl,
    token: f.deviceScopeToken,
    devices: 1000,
    prefix: 'fleet-',
    concurrency: 10,
    shares: { fail: 0.05, rollBack: 0, signatureInvalid: 0, silent: 0 },
    seed: 'rollout-test',
    framework: MANIFEST.framework,
    chipFamily: MANIFEST.chip_family,
  };

  const first = await simulate(options);
  expect(first.errors).toBe(0);
  expect(first.checks).toBe(1000);
  // About a tenth of the fleet; the exact share is the cohort tests' business.
  expect(first.offered).toBeGreaterThan(50);
  expect(first.offered).toBeLessThan(150);
  expect(first.statuses.not_in_rollout).toBe(1000 - first.offered);

  await api('POST', `/api/v1/projects/${f.project.id}/deployments/${release.body.deployment_id}/transition/`, {
    token: f.user.token,
    json: { action: 'ramp', rollout_percentage: 100 },
  });
  const second = await simulate({ ...options, fleet: first.builds });
  expect(second.errors).toBe(0);

  const failing = [...first.behaviours].filter(([, behaviour]) => behaviour === 'fail').map(([id]) => id);
  expect(failing).toHaveLength(50);
  // Devices that confirmed in the first round were up to date in the second.
  expect(second.statuses.up_to_date).toBe(first.confirmed);
  expect(first.confirmed + second.confirmed).toBe(950);

  const devices = (await api('GET', `/api/v1/projects/${f.project.id}/devices/`, { token: f.user.token })).body as Array<{
    id: string;
    device_id: string;
    current_build_number: number;
    last_ota_status: string;
  }>;
  expect(devices).toHaveLength(1000);
  for (const device of devices) {
    const injected = failing.includes(device.device_id);
    expect([device.device_id, device.current_build_number, device.last_ota_status]).toEqual([
      device.device_id,
      injected ? 0 : release.body.build_number,
      injected ? 'failed' : 'confirmed',
    ]);
  }

  const states = (await api('GET', `/api/v1/projects/${f.project.id}/deployments/${release.body.deployment_id}/states/`, { token: f.user.token }))
    .body as Array<{ device_id: string; status: string }>;
  const uuidOf = new Map(devices.map((device) => [device.device_id, device.id]));
  const failedStates = states.filter((state) => state.status === 'failed').map((state) => state.device_id).sort();
  expect(failedStates).toEqual(failing.map((id) => uuidOf.get(id)).sort());
  expect(states.filter((state) => state.status === 'confirmed')).toHaveLength(950);
  expect(states).toHaveLength(1000);

  const deployment = await api('GET', `/api/v1/projects/${f.project.id}/deployments/${release.body.deployment_id}/`, { token: f.user.token });
  // Every failed report counts: failing devices in the first cohort failed twice.
  expect(deployment.body.failure_count).toBe(first.failedReports + second.failedReports);
  expect(second.failedReports).toBe(50);
}, 300_000);

/** A project without a device cap, and a started deployment on its default channel with `options`. */
async function guardedDeployment(options: Record<string, unknown>) {
  const f = await setupProject({ maxDevices: 0 });
  const artifact = (await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(256)) })).body;
  const created = await api('POST', `/api/v1/projects/${f.project.id}/deployments/`, {
    token: f.user.token,
    json: { artifact_id: artifact.id, target_channel_ids: [f.defaultChannelId], ...options },
  });
  const path = `/api/v1/projects/${f.project.id}/deployments/${created.body.id}/`;
  expect((await api('POST', `${path}transition/`, { token: f.user.token, json: { action: 'start' } })).status).toBe(200);
  const simulation = (shares: Partial<SimulationOptions['shares']>, burst: boolean): SimulationOptions => ({
    url: testStack().gatewayUrl,
    token: f.deviceScopeToken,
    devices: 100,
    prefix: 'guarded-',
    concurrency: 5,
    shares: { fail: 0, rollBack: 0, signatureInvalid: 0, silent: 0, ...shares },
    seed: 'guardrails',
    framework: MANIFEST.framework,
    chipFamily: MANIFEST.chip_family,
    burst,
  });
  return { f, path, simulation };
}

it('a simulated failure burst pauses a guarded deployment before most of the fleet is offered it', async () => {
  const { f, path, simulation } = await guardedDeployment({ guardrails: { failure_threshold: { percent: 20, min_finished: 10 } } });
  const run = await simulate(simulation({ fail: 0.3 }, true));
  expect(run.errors).toBe(0);
  const deployment = (await api('GET', path, { token: f.user.token })).body;
  expect(deployment).toMatchObject({ state: 'paused', guardrail_pause: { guardrail: 'failure_threshold' } });
  // The burst came first: the pause stopped the offers long before the 100 devices were through.
  expect(run.offered).toBeLessThan(50);
  expect(run.statuses.no_active_deployment).toBe(100 - run.offered);
  // Devices the pause caught mid-update stopped, and none of them counts as a failure.
  expect(run.confirmed + run.failedReports + run.stopped).toBe(run.offered);
}, 120_000);

it('a simulated silent share counts as no_confirmation once its timeout passes', async () => {
  const { f, path, simulation } = await guardedDeployment({ guardrails: { confirm_timeout_seconds: 1, failure_threshold: { percent: 50, min_finished: 10 } } });
  const run = await simulate(simulation({ silent: 0.2 }, false));
  expect([run.errors, run.offered, run.silent, run.confirmed]).toEqual([0, 100, 20, 80]);
  const summary = await eventually(
    async () => (await api('GET', `${path}summary/`, { token: f.user.token })).body,
    // The last silent devices pass their timeout a second after the run.
    (body) => body.failures_by_reason[0]?.count === 20,
    20_000,
  );
  expect(summary.failures_by_reason).toEqual([{ reason: 'no_confirmation', count: 20 }]);
  // 20 of 100 finished is below the 50% threshold: still active.
  expect((await api('GET', path, { token: f.user.token })).body.state).toBe('active');
}, 120_000);

it('counts apart the devices whose bootloader would refuse the image, by their chip revision and secure version', async () => {
  const f = await setupProject({ name: 'fleet revisions', maxDevices: 0 });
  const image = makeEspImage({ minChipRevision: 3, maxChipRevision: 199 });
  const released = await api('POST', `/api/v1/projects/${f.project.id}/release/`, { token: f.user.token, body: uploadForm({ ...MANIFEST, chip_family: 'esp32c3' }, image) });
  expect(released.status).toBe(201);
  const options: SimulationOptions = {
    url: testStack().gatewayUrl,
    token: f.deviceScopeToken,
    devices: 90,
    prefix: 'rev-',
    concurrency: 10,
    shares: { fail: 0, rollBack: 0, signatureInvalid: 0, silent: 0 },
    seed: 'revisions',
    framework: MANIFEST.framework,
    chipFamily: 'esp32c3',
    chipRevisions: [2, 3, 200],
  };
  const run = await simulate(options);
  expect(run.errors).toBe(0);
  expect(run.statuses).toEqual({ offered: 30, chip_revision_unsupported: 60 });
  expect(run.confirmed).toBe(30);
  const burnt = await simulate({ ...options, prefix: 'sv-', chipRevisions: [3], secureVersion: 1 });
  expect(burnt.statuses).toEqual({ secure_version_too_low: 90 });
});
