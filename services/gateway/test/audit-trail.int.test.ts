import { generateKeyPairSync } from 'node:crypto';
import { MANIFEST, api, eventually, randomBinary, setupProject, uploadForm } from '@ota/testkit';

// docs/api.md, "Audit event": every customer mutation writes one audit event, with its actor and the
// token prefix, never the token.

it('writes an audit event for every kind of mutation', async () => {
  const f = await setupProject({ name: 'audit trail' });
  const p = `/api/v1/projects/${f.project.id}`;
  const as = f.apiToken;

  const group = (await api('POST', `${p}/groups/`, { token: as, json: { name: 'g' } })).body;
  await api('POST', `${p}/channels/`, { token: as, json: { name: 'beta' } });
  const device = (await api('POST', `${p}/devices/`, { token: as, json: { device_id: 'audited' } })).body;
  await api('PATCH', `${p}/devices/${device.id}/`, { token: as, json: { metadata: { a: 1 } } });
  await api('POST', `${p}/groups/${group.id}/members/`, { token: as, json: { device_id: device.id } });
  await api('DELETE', `${p}/groups/${group.id}/members/${device.id}/`, { token: as });
  await api('POST', `${p}/devices/${device.id}/token/`, { token: as });
  await api('DELETE', `${p}/devices/${device.id}/token/`, { token: as });
  await api('DELETE', `${p}/devices/${device.id}/`, { token: as });
  const token = (await api('POST', `${p}/tokens/`, { token: as, json: { name: 'extra', scope: 'api', role: 'admin' } })).body;
  await api('DELETE', `${p}/tokens/${token.id}/`, { token: as });
  const key = (
    await api('POST', `${p}/signing-keys/`, {
      token: as,
      json: { name: 'k', public_key: generateKeyPairSync('ed25519').publicKey.export({ format: 'pem', type: 'spki' }).toString() },
    })
  ).body;
  await api('DELETE', `${p}/signing-keys/${key.id}/`, { token: as });
  const artifact = (await api('POST', `${p}/artifacts/`, { token: as, body: uploadForm(MANIFEST, randomBinary(8)) })).body;
  await api('PATCH', `${p}/artifacts/${artifact.id}/`, { token: as, json: { archived: true } });
  await api('PATCH', `${p}/artifacts/${artifact.id}/`, { token: as, json: { archived: false } });
  const deployment = (await api('POST', `${p}/deployments/`, { token: as, json: { artifact_id: artifact.id, target_channel_ids: [f.defaultChannelId] } })).body;
  for (const json of [{ action: 'start' }, { action: 'pause' }, { action: 'resume' }, { action: 'ramp', rollout_percentage: 5 }, { action: 'complete' }]) {
    await api('POST', `${p}/deployments/${deployment.id}/transition/`, { token: as, json });
  }
  const other = (await api('POST', `${p}/deployments/`, { token: as, json: { artifact_id: artifact.id, target_channel_ids: [f.defaultChannelId] } })).body;
  await api('POST', `${p}/deployments/${other.id}/transition/`, { token: as, json: { action: 'cancel' } });
  await api('POST', `${p}/release/`, { token: as, body: uploadForm(MANIFEST, randomBinary(8)) });

  const expected = [
    'project.created',
    'token.created',
    'token.revoked',
    'device.created',
    'device.updated',
    'device.deleted',
    'device_token.issued',
    'device_token.revoked',
    'group.created',
    'group.member_added',
    'group.member_removed',
    'channel.created',
    'artifact.uploaded',
    'artifact.archived',
    'artifact.unarchived',
    'deployment.created',
    'deployment.started',
    'deployment.paused',
    'deployment.resumed',
    'deployment.ramped',
    'deployment.completed',
    'deployment.cancelled',
    'release.created',
    'signing_key.created',
    'signing_key.deleted',
  ];
  const audit = await eventually(
    () => api('GET', `${p}/audit/`, { token: f.user.token }),
    (response) => expected.every((action) => response.body.some((event: { action: string }) => event.action === action)),
  );
  const actions = new Set(audit.body.map((event: { action: string }) => event.action));
  expect(expected.filter((action) => !actions.has(action))).toEqual([]);

  const byApiToken = audit.body.filter((event: { action: string }) => event.action === 'channel.created');
  expect(byApiToken).toEqual([expect.objectContaining({ actor_type: 'project_token', token_prefix: f.apiToken.slice(0, 12) })]);
  const byUser = audit.body.find((event: { action: string }) => event.action === 'project.created');
  expect(byUser).toMatchObject({ actor_type: 'user', actor_id: f.user.user_id, token_prefix: f.user.token.slice(0, 12) });
  // Newest first.
  const times = audit.body.map((event: { created_at: string }) => event.created_at);
  expect([...times].sort().reverse()).toEqual(times);
  for (const secret of [f.user.token, f.apiToken, f.deviceScopeToken]) expect(JSON.stringify(audit.body)).not.toContain(secret);
});

it('refuses a JSON body over the documented limit with 413', async () => {
  const f = await setupProject();
  const response = await api('POST', `/api/v1/projects/${f.project.id}/groups/`, { token: f.user.token, json: { name: 'x'.repeat(70 * 1024) } });
  expect(response.status).toBe(413);
  expect(response.body.detail).toContain('65536');
});

it('lists the trail in pages: limit, then before the last event of the page, to the end', async () => {
  const f = await setupProject({ name: 'audit pages' });
  const p = `/api/v1/projects/${f.project.id}`;
  for (let i = 0; i < 12; i += 1) await api('POST', `${p}/groups/`, { token: f.apiToken, json: { name: `g${i}` } });
  // setupProject's two tokens and the project itself make three more.
  const all = await eventually(
    () => api('GET', `${p}/audit/`, { token: f.user.token }),
    (response) => response.body.length === 15,
  );
  expect(all.body).toHaveLength(15);
  const paged: Array<{ id: string }> = [];
  let before = '';
  for (;;) {
    const page = await api('GET', `${p}/audit/?limit=4${before ? `&before=${before}` : ''}`, { token: f.user.token });
    expect(page.status).toBe(200);
    expect(page.body.length).toBeLessThanOrEqual(4);
    paged.push(...page.body);
    if (page.body.length < 4) break;
    before = page.body.at(-1).id;
  }
  expect(paged.map((event) => event.id)).toEqual(all.body.map((event: { id: string }) => event.id));
  // A limit above the cap of 1000 is served as 1000, not refused.
  const overCap = await api('GET', `${p}/audit/?limit=5000`, { token: f.user.token });
  expect(overCap.status).toBe(200);
  expect(overCap.body.map((event: { id: string }) => event.id)).toEqual(all.body.map((event: { id: string }) => event.id));
  expect((await api('GET', `${p}/audit/?limit=99999999999`, { token: f.user.token })).status).toBe(422);
  expect((await api('GET', `${p}/audit/?limit=0`, { token: f.user.token })).status).toBe(422);
  // Another project's event id names nothing here.
  const other = await setupProject({ name: 'audit elsewhere' });
  const foreign = (await eventually(() => api('GET', `/api/v1/projects/${other.project.id}/audit/`, { token: other.user.token }), (response) => response.body.length > 0)).body[0].id;
  expect((await api('GET', `${p}/audit/?before=${foreign}`, { token: f.user.token })).status).toBe(404);
});
