import { MANIFEST, api, createUser, eventually, randomBinary, setupProject, uploadForm } from '@ota/testkit';

describe('projects', () => {
  it('lists, reads and gives unique slugs per owner', async () => {
    const user = createUser();
    const first = await api('POST', '/api/v1/projects/', { token: user.token, json: { name: 'Field Units' } });
    const second = await api('POST', '/api/v1/projects/', { token: user.token, json: { name: 'field units' } });
    expect([first.body.slug, second.body.slug]).toEqual(['field-units', 'field-units-2']);
    const listed = await api('GET', '/api/v1/projects/', { token: user.token });
    expect(listed.body.map((project: { id: string }) => project.id)).toEqual([first.body.id, second.body.id]);
    expect((await api('GET', `/api/v1/projects/${first.body.id}/`, { token: user.token })).body).toEqual(first.body);
  });

  it('lists only its own project for an api token', async () => {
    const f = await setupProject();
    await api('POST', '/api/v1/projects/', { token: f.user.token, json: { name: 'another' } });
    const listed = await api('GET', '/api/v1/projects/', { token: f.apiToken });
    expect(listed.body.map((project: { id: string }) => project.id)).toEqual([f.project.id]);
  });

  it('refuses deletion with 409 while a deployment is active or paused, then deletes', async () => {
    const f = await setupProject();
    const release = await api('POST', `/api/v1/projects/${f.project.id}/release/`, { token: f.user.token, body: uploadForm(MANIFEST, randomBinary(16)) });
    const refused = await api('DELETE', `/api/v1/projects/${f.project.id}/`, { token: f.user.token });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain('1 active or paused');
    const transition = (action: string) =>
      api('POST', `/api/v1/projects/${f.project.id}/deployments/${release.body.deployment_id}/transition/`, { token: f.user.token, json: { action } });
    expect((await transition('pause')).status).toBe(200);
    expect((await api('DELETE', `/api/v1/projects/${f.project.id}/`, { token: f.user.token })).status).toBe(409);
    expect((await transition('cancel')).status).toBe(200);
    expect((await api('DELETE', `/api/v1/projects/${f.project.id}/`, { token: f.user.token })).status).toBe(204);
    expect((await api('GET', `/api/v1/projects/${f.project.id}/`, { token: f.user.token })).status).toBe(404);
    // Its tokens went with it.
    expect((await api('GET', '/api/v1/projects/', { token: f.apiToken })).status).toBe(401);
  });
});

describe('tokens', () => {
  it('create, list without the raw value, and revoke at once, keeping last_used_at', async () => {
    const user = createUser();
    const created = await api('POST', '/api/v1/me/tokens/', { token: user.token, json: { name: 'ci' } });
    expect(created.status).toBe(201);
    expect(created.body.token).toMatch(/^ota_pat_[A-Za-z0-9_-]{43}$/);
    expect((await api('GET', '/api/v1/projects/', { token: created.body.token })).status).toBe(200);
    const listed = await eventually(
      () => api('GET', '/api/v1/me/tokens/', { token: user.token }),
      (response) => response.body.find((token: { id: string }) => token.id === created.body.id)?.last_used_at !== null,
    );
    const entry = listed.body.find((token: { id: string }) => token.id === created.body.id);
    expect(entry).not.toHaveProperty('token');
    expect(entry.last_used_at).not.toBeNull();

    expect((await api('DELETE', `/api/v1/me/tokens/${created.body.id}/`, { token: user.token })).status).toBe(204);
    expect((await api('GET', '/api/v1/projects/', { token: created.body.token })).status).toBe(401);
    const after = (await api('GET', '/api/v1/me/tokens/', { token: user.token })).body.find((token: { id: string }) => token.id === created.body.id);
    expect(after.revoked_at).not.toBeNull();
    expect(after.last_used_at).toBe(entry.last_used_at);
  });

  it('stays revoked when the revocation races the token\'s first uses (its usage is recorded apart from it)', async () => {
    const user = createUser();
    for (let round = 0; round < 5; round += 1) {
      const created = await api('POST', '/api/v1/me/tokens/', { token: user.token, json: { name: `race-${round}` } });
      // First uses record last_used_at while the revocation writes revoked_at.
      const uses = Array.from({ length: 20 }, () => api('GET', '/api/v1/projects/', { token: created.body.token }));
      const revoked = api('DELETE', `/api/v1/me/tokens/${created.body.id}/`, { token: user.token });
      await Promise.all([...uses, revoked]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await api('GET', '/api/v1/projects/', { token: created.body.token })).status).toBe(401);
      const listed = (await api('GET', '/api/v1/me/tokens/', { token: user.token })).body.find((token: { id: string }) => token.id === created.body.id);
      expect(listed.revoked_at).not.toBeNull();
    }
  });

  it('revokes project tokens, and not another project’s', async () => {
    const f = await setupProject();
    const g = await setupProject();
    const tokens = await api('GET', `/api/v1/projects/${f.project.id}/tokens/`, { token: f.user.token });
    const apiTokenId = tokens.body.find((token: { scope: string }) => token.scope === 'api').id;
    expect((await api('DELETE', `/api/v1/projects/${g.project.id}/tokens/${apiTokenId}/`, { token: g.user.token })).status).toBe(404);
    expect((await api('DELETE', `/api/v1/projects/${f.project.id}/tokens/${apiTokenId}/`, { token: f.user.token })).status).toBe(204);
    expect((await api('GET', `/api/v1/projects/${f.project.id}/`, { token: f.apiToken })).status).toBe(401);
  });

  it('answers 404 when a project token is used on another project', async () => {
    const f = await setupProject();
    const g = await setupProject();
    expect((await api('GET', `/api/v1/projects/${g.project.id}/devices/`, { token: f.apiToken })).status).toBe(404);
  });
});

describe('staff', () => {
  it('must name the owner to list projects, may read them, and may not write to them', async () => {
    const staff = createUser({ staff: true });
    const customer = await setupProject();
    expect((await api('GET', '/api/v1/projects/', { token: staff.token })).status).toBe(400);
    const byEmail = await api('GET', `/api/v1/projects/?email=${encodeURIComponent(customer.user.email)}`, { token: staff.token });
    expect(byEmail.body.map((project: { id: string }) => project.id)).toEqual([customer.project.id]);
    const byOwner = await api('GET', `/api/v1/projects/?owner_id=${customer.user.user_id}`, { token: staff.token });
    expect(byOwner.body).toEqual(byEmail.body);

    expect((await api('GET', `/api/v1/projects/${customer.project.id}/audit/`, { token: staff.token })).status).toBe(200);
    expect((await api('GET', `/api/v1/projects/${customer.project.id}/devices/`, { token: staff.token })).status).toBe(200);
    expect((await api('POST', `/api/v1/projects/${customer.project.id}/groups/`, { token: staff.token, json: { name: 'x' } })).status).toBe(403);
    expect((await api('DELETE', `/api/v1/projects/${customer.project.id}/`, { token: staff.token })).status).toBe(403);
  });

  it('looks up one user by exact e-mail; others get 403', async () => {
    const staff = createUser({ staff: true });
    const customer = createUser({ maxDevices: 9 });
    const found = await api('GET', `/api/v1/users?email=${encodeURIComponent(customer.email)}`, { token: staff.token });
    expect(found.body).toEqual([expect.objectContaining({ id: customer.user_id, email: customer.email, is_staff: false, max_devices: 9 })]);
    expect((await api('GET', '/api/v1/users?email=nobody@example.com', { token: staff.token })).body).toEqual([]);
    expect((await api('GET', '/api/v1/users', { token: staff.token })).status).toBe(422);
    expect((await api('GET', `/api/v1/users?email=${encodeURIComponent(customer.email)}`, { token: customer.token })).status).toBe(403);
  });

  it('leaves no audit event for reads', async () => {
    const staff = createUser({ staff: true });
    const customer = await setupProject();
    const before = await eventually(
      () => api('GET', `/api/v1/projects/${customer.project.id}/audit/`, { token: customer.user.token }),
      (response) => response.body.length >= 3,
    );
    await api('GET', `/api/v1/projects/${customer.project.id}/`, { token: staff.token });
    await api('GET', `/api/v1/projects/${customer.project.id}/tokens/`, { token: staff.token });
    const after = await api('GET', `/api/v1/projects/${customer.project.id}/audit/`, { token: customer.user.token });
    expect(after.body).toEqual(before.body);
  });
});
