import { randomUUID } from 'node:crypto';
import { adminCommand, api, checkBody, setupProject, startExtraGateway } from '@ota/testkit';

describe('the admin command', () => {
  it('creates a user with a working personal token, and sets the plan', () => {
    const email = `admin-${randomUUID()}@example.com`;
    const created = adminCommand(['create-user', '--email', email, '--max-devices', '7']);
    expect(created.status).toBe(0);
    const user = JSON.parse(created.stdout);
    expect(user).toEqual({ user_id: expect.any(String), email, is_staff: false, token: expect.stringMatching(/^ota_pat_/) });

    const plan = adminCommand(['set-plan', '--email', email, '--max-uploads-per-month', '3']);
    expect(plan.status).toBe(0);
    expect(JSON.parse(plan.stdout)).toEqual({ user_id: user.user_id, email, max_devices: 7, max_uploads_per_month: 3 });
    return api('GET', '/api/v1/projects/', { token: user.token }).then((response) => expect(response.status).toBe(200));
  });

  it('refuses a duplicate e-mail, an unknown user and bad arguments with a message', () => {
    const email = `admin-${randomUUID()}@example.com`;
    expect(adminCommand(['create-user', '--email', email]).status).toBe(0);
    const duplicate = adminCommand(['create-user', '--email', email]);
    expect(duplicate.status).toBe(1);
    expect(duplicate.stderr).toContain('already exists');
    expect(adminCommand(['set-plan', '--email', `nobody-${randomUUID()}@example.com`]).stderr).toContain('no user');
    expect(adminCommand(['create-user', '--email', email, '--max-devices', 'many']).stderr).toContain('whole number');
    expect(adminCommand(['launch-rockets']).stderr).toContain('usage');
  });
});

describe('a plan change', () => {
  it('counts from the next check on every gateway, though each caches plans', async () => {
    const f = await setupProject({ maxDevices: 1 });
    // A second gateway whose cache would keep the old plan for ten minutes if nobody told it.
    const other = await startExtraGateway({ PLAN_CACHE_TTL_MS: '600000' });
    try {
      const check = (base: string, deviceId: string) =>
        api('POST', `${base}/api/v1/ota/check/`, { token: f.deviceScopeToken, json: checkBody(deviceId) }).then((response) => response.body.status);
      expect(await check('', 'plan-1')).toBe('no_active_deployment');
      // Both gateways now hold the plan with its cap of one.
      expect(await check('', 'plan-2')).toBe('over_limit');
      expect(await check(other.url, 'plan-2')).toBe('over_limit');

      const raised = adminCommand(['set-plan', '--email', f.user.email, '--max-devices', '3']);
      expect(raised.status).toBe(0);
      expect(raised.stderr).toMatch(/gateways that applied the plan at once: [2-9]/);
      expect(await check(other.url, 'plan-2')).toBe('no_active_deployment');
      expect(await check('', 'plan-3')).toBe('no_active_deployment');
      expect(await check(other.url, 'plan-4')).toBe('over_limit');

      // Lowering it counts at once too: a freed place is not taken by a new device.
      await api('DELETE', `/api/v1/projects/${f.project.id}/devices/${(await deviceUuid(f, 'plan-3'))}/`, { token: f.user.token });
      expect(adminCommand(['set-plan', '--email', f.user.email, '--max-devices', '2']).status).toBe(0);
      expect(await check(other.url, 'plan-5')).toBe('over_limit');
    } finally {
      await other.stop();
    }
  });
});

async function deviceUuid(f: Awaited<ReturnType<typeof setupProject>>, deviceId: string): Promise<string> {
  const devices = await api('GET', `/api/v1/projects/${f.project.id}/devices/`, { token: f.user.token });
  return devices.body.find((device: { device_id: string }) => device.device_id === deviceId).id;
}
