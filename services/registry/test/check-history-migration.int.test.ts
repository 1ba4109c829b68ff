import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import mongoose from 'mongoose';
import { api, setupProject, testStack } from '@ota/testkit';

// Before the decision history moved onto the device document, it lived in `check_events`, one
// document per slot; registry's migrate.js moves it over and drops the collection.
const registryDatabase = () => String(testStack().gatewayEnv.MONGODB_DATABASE).replace(/gateway$/, 'registry');

function runMigration() {
  const env = { PATH: process.env.PATH, MONGODB_URI: testStack().mongodbUri, MONGODB_DATABASE: registryDatabase() };
  return spawnSync(process.execPath, [join(__dirname, '..', 'dist', 'migrate.js')], { env, encoding: 'utf8' });
}

test("migrate.js moves a device's decisions from check_events onto the device, once", async () => {
  const f = await setupProject({ name: 'history-migration' });
  const device = await api('POST', `/api/v1/projects/${f.project.id}/devices/`, { token: f.user.token, json: { device_id: 'legacy-1' } });
  expect(device.status).toBe(201);
  const legacy = [1, 2, 3].map((seq) => ({
    _id: `${device.body.id}:${seq - 1}`,
    project_id: f.project.id,
    device_uuid: device.body.id,
    device_id: 'legacy-1',
    seq,
    id: `event-${seq}`,
    created_at: new Date(Date.UTC(2026, 0, seq)),
    decision: 'no_update',
    status: 'no_active_deployment',
    deployment_id: '',
    artifact_build_number: null,
    reported_build_number: seq,
    reported_version: `1.0.${seq}`,
    message: 'there is no active deployment',
  }));
  const connection = await mongoose.createConnection(testStack().mongodbUri).asPromise();
  try {
    const database = connection.getClient().db(registryDatabase());
    await database.collection('check_events').insertMany(legacy as never[]);

    const first = runMigration();
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    expect(JSON.parse(first.stdout).collections).not.toContain('check_events');
    expect(await database.listCollections({ name: 'check_events' }).toArray()).toEqual([]);
    // Run again (as every upgrade does): nothing to move, nothing changed.
    expect(runMigration().status).toBe(0);
  } finally {
    await connection.close();
  }

  const events = await api('GET', `/api/v1/projects/${f.project.id}/devices/${device.body.id}/check-events/`, { token: f.user.token });
  expect(events.status).toBe(200);
  expect(events.body).toEqual(
    [3, 2, 1].map((seq) => expect.objectContaining({ id: `event-${seq}`, device_id: 'legacy-1', reported_build_number: seq, reported_version: `1.0.${seq}`, status: 'no_active_deployment' })),
  );
});
