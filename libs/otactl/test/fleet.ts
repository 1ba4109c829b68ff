import { api, checkBody, type ProjectFixture } from '@ota/testkit';

// The fleet the CLI tests release to, played by the test through the device API.

/** A group `group` of the devices `deviceIds`, each registered by its first check. */
export async function fleetInGroup(f: ProjectFixture, group: string, deviceIds: string[]): Promise<void> {
  const created = await api('POST', `/api/v1/projects/${f.project.id}/groups/`, { token: f.user.token, json: { name: group } });
  for (const deviceId of deviceIds) expect((await api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody(deviceId) })).status).toBe(200);
  const devices = (await api('GET', `/api/v1/projects/${f.project.id}/devices/`, { token: f.user.token })).body as Array<{ id: string; device_id: string }>;
  const add = devices.filter((device) => deviceIds.includes(device.device_id)).map((device) => device.id);
  expect((await api('POST', `/api/v1/projects/${f.project.id}/groups/${created.body.id}/members/changes/`, { token: f.user.token, json: { add } })).status).toBe(200);
}

/** Each device checks until it is offered build `build` (`update_available`), then reports `events` for it. */
export async function fleetUpdates(f: ProjectFixture, build: number, deviceIds: string[], events: Array<{ event: string; reason?: string }>): Promise<void> {
  const deadline = Date.now() + 60_000;
  const pending = new Set(deviceIds);
  while (pending.size > 0 && Date.now() < deadline) {
    for (const deviceId of [...pending]) {
      const check = await api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody(deviceId) });
      if (!check.body.update_available || check.body.build_number !== build) continue;
      pending.delete(deviceId);
      for (const step of events) {
        await api('POST', '/api/v1/ota/status/', {
          token: f.deviceScopeToken,
          json: { device_id: deviceId, deployment_id: check.body.deployment_id, ...step, ...(step.event === 'confirmed' ? { build_number: build } : {}) },
        });
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  if (pending.size > 0) throw new Error(`never offered build ${build}: ${[...pending].join(', ')}`);
}
