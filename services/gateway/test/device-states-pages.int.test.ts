import { MANIFEST, api, checkBody, randomBinary, setupProject, uploadForm } from '@ota/testkit';

// A deployment's per-device states a page at a time (docs/api.md, "Rollout state"): pages in the
// order of the device UUIDs, read one slice of the deployment at a time, that together hold every
// state once; a status filter that holds every device at that status; and the count on each page.

test('the states of 1,100 devices come in pages that hold each device once, in UUID order, and by status', async () => {
  const f = await setupProject({ name: 'states-pages', maxDevices: 2000 });
  const release = await api('POST', `/api/v1/projects/${f.project.id}/release/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(512), { rollout_percentage: '100' }) });
  expect(release.status).toBe(201);
  const deploymentId = release.body.deployment_id as string;
  const deviceIds = Array.from({ length: 1100 }, (_, index) => `state-${String(index).padStart(4, '0')}`);
  for (let start = 0; start < deviceIds.length; start += 50) {
    const answers = await Promise.all(deviceIds.slice(start, start + 50).map((deviceId) => api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody(deviceId) })));
    expect(answers.map((answer) => answer.body.status)).toEqual(answers.map(() => 'offered'));
  }
  const failing = deviceIds.filter((_, index) => index % 37 === 0);
  for (const deviceId of failing) {
    const reported = await api('POST', '/api/v1/ota/status/', { token: f.deviceScopeToken, json: { device_id: deviceId, deployment_id: deploymentId, event: 'failed', reason: 'flash_write_failed' } });
    expect(reported.status).toBeLessThan(300);
  }
  const statesPath = `/api/v1/projects/${f.project.id}/deployments/${deploymentId}/states/`;
  const whole = (await api('GET', statesPath, { token: f.user.token })).body as Array<{ device_id: string; status: string }>;
  expect(whole).toHaveLength(1100);

  const walk = async (query: string) => {
    const seen: Array<{ device_id: string; status: string }> = [];
    const counts: string[] = [];
    let afterId = '';
    for (let page = 0; page < 200; page += 1) {
      const answer = await api('GET', `${statesPath}?${query}${afterId ? `&after_id=${afterId}` : ''}`, { token: f.user.token });
      expect(answer.status).toBe(200);
      seen.push(...answer.body);
      counts.push(answer.headers.get('x-total-count') ?? `about ${answer.headers.get('x-total-count-estimate')}`);
      afterId = answer.headers.get('x-next-after-id') ?? '';
      if (!afterId) return { seen, counts };
    }
    throw new Error('the pages did not end');
  };

  const all = await walk('limit=100');
  const ids = all.seen.map((state) => state.device_id);
  expect(ids).toEqual([...new Set(whole.map((state) => state.device_id))].sort());
  // The count on each page: exact, or an estimate near the truth.
  for (const count of all.counts) {
    const value = Number(count.replace('about ', ''));
    expect([count, value > 700 && value < 1600]).toEqual([count, true]);
  }

  const failed = await walk('limit=10&status=failed');
  expect(failed.seen.map((state) => state.status)).toEqual(failing.map(() => 'failed'));
  expect(failed.seen).toHaveLength(failing.length);
  const uuidsOfFailing = whole.filter((state) => state.status === 'failed').map((state) => state.device_id).sort();
  expect(failed.seen.map((state) => state.device_id)).toEqual(uuidsOfFailing);

  expect((await api('GET', `${statesPath}?after_id=${ids[10]}`, { token: f.user.token })).status).toBe(422);
  expect((await api('GET', `${statesPath}?limit=10&after_id=not-a-uuid`, { token: f.user.token })).status).toBe(422);
}, 180_000);
