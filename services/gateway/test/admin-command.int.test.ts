import { randomUUID } from 'node:crypto';
import { adminCommand, api } from '@ota/testkit';

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
