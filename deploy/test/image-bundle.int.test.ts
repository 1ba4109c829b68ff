import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testStack } from '@ota/testkit';

// What each image holds is what `pnpm deploy --prod` makes of its service (deploy/Dockerfile). No
// Docker engine runs here, so this test makes that bundle itself, checks that it carries no
// development dependency, and runs the bundle's migration entry point (the Helm hook Job's
// command) against the real MongoDB-protocol server.

const root = join(__dirname, '..', '..');
const pnpm = join(root, '.tools', 'pnpm', 'node_modules', '.bin', 'pnpm');

const COLLECTIONS: Record<string, string[]> = {
  gateway: ['audit_outbox', 'idempotency_keys', 'invitations', 'role_grants', 'sessions', 'sign_in_attempts', 'token_usage', 'tokens', 'users'],
  registry: ['channels', 'check_records', 'data_migrations', 'device_places', 'device_profile_changes', 'device_profile_packed_projects', 'device_profile_packs', 'device_profiles', 'devices', 'fleet_snapshots', 'groups', 'membership_changes', 'memberships', 'projects'],
  artifacts: ['artifacts', 'coredump_pieces', 'coredump_uploads', 'crash_decode_claims', 'crash_groups', 'crashes', 'patch_claims', 'patches', 'sbom_claims', 'sbom_components', 'signing_keys', 'upload_places', 'vex_statements', 'vulnerabilities'],
  rollout: ['data_migrations', 'deployment_transitions', 'deployments', 'device_events', 'device_reports', 'health_tallies', 'offer_slots', 'retired_targets', 'status_count_deltas', 'status_count_snapshots'],
  telemetry: ['audit_events', 'webhook_deliveries', 'webhook_delivery_claims', 'webhooks'],
};

// Our own development dependencies (a library may still bring typings such as @types/node along).
const DEV_ONLY = ['jest', 'typescript', '@swc/core', '@swc/jest', '@ota/testkit', 'react', 'vite', 'playwright-core'];

// Lists every collection's index names, from inside the bundle (with the bundle's own mongoose).
const LIST_INDEXES = `
const mongoose = require('mongoose');
(async () => {
  const connection = await mongoose.createConnection(process.env.MONGODB_URI, { dbName: process.env.MONGODB_DATABASE }).asPromise();
  const indexes = {};
  for (const { name } of await connection.db.listCollections().toArray()) {
    indexes[name] = (await connection.db.collection(name).indexes()).map((index) => index.name).sort();
  }
  await connection.db.dropDatabase();
  await connection.close();
  process.stdout.write(JSON.stringify(indexes));
})();`;

describe.each(Object.keys(COLLECTIONS))('the %s image bundle', (service) => {
  let bundle: string;

  beforeAll(() => {
    bundle = join(mkdtempSync(join(tmpdir(), `ota-bundle-${service}-`)), 'app');
    const deployed = spawnSync(pnpm, ['--filter', `@ota/${service}`, 'deploy', '--prod', bundle], { cwd: root, encoding: 'utf8' });
    if (deployed.status !== 0) throw new Error(`pnpm deploy failed:\n${deployed.stderr}${deployed.stdout}`);
  }, 120_000);

  afterAll(() => rmSync(join(bundle, '..'), { recursive: true, force: true }));

  it('holds the compiled service and only production dependencies', () => {
    expect(existsSync(join(bundle, 'dist', 'main.js'))).toBe(true);
    expect(existsSync(join(bundle, 'dist', 'migrate.js'))).toBe(true);
    const installed = readdirSync(join(bundle, 'node_modules', '.pnpm'));
    for (const name of DEV_ONLY) {
      const stored = name.replace('/', '+');
      expect([name, installed.filter((entry) => entry.startsWith(`${stored}@`))]).toEqual([name, []]);
    }
    // The gateway serves the built console from its own bundle; the console's build tools stay out.
    if (service === 'gateway') expect(existsSync(join(bundle, 'node_modules', '@ota', 'console', 'dist', 'index.html'))).toBe(true);
  });

  it("creates the service's collections and indexes with dist/migrate.js", () => {
    const env = { ...process.env, MONGODB_URI: testStack().mongodbUri, MONGODB_DATABASE: `ota_bundle_${service}_${process.pid}` };
    const migrated = spawnSync('node', ['dist/migrate.js'], { cwd: bundle, env, encoding: 'utf8' });
    expect(migrated.stderr).toBe('');
    expect(migrated.status).toBe(0);
    expect(JSON.parse(migrated.stdout)).toEqual({ service, database: env.MONGODB_DATABASE, collections: COLLECTIONS[service] });
    // A second run (the next upgrade's Job) finds everything in place and changes nothing.
    expect(spawnSync('node', ['dist/migrate.js'], { cwd: bundle, env, encoding: 'utf8' }).status).toBe(0);

    const listed = spawnSync('node', ['-e', LIST_INDEXES], { cwd: bundle, env, encoding: 'utf8' });
    expect(listed.status).toBe(0);
    const indexes = JSON.parse(listed.stdout) as Record<string, string[]>;
    expect(Object.keys(indexes).sort()).toEqual(COLLECTIONS[service]);
    const secondary = Object.values(indexes).flat().filter((name) => name !== '_id_');
    expect(secondary.length).toBeGreaterThan(0);
  });
});
