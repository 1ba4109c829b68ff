import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createUser, testStack } from '@ota/testkit';

// A client generated from the gateway's own OpenAPI document by a mainstream generator of another
// language (openapi-python-client, pinned, installed into .tools/ by `npm test`) runs the whole
// flow against the real stack (generated-client/flow.py). It fails when the document does not let
// the generated client express a call: a file part sent as text, a download without its
// parameters, a status the document does not list.

const root = join(__dirname, '..', '..', '..');
const venv = join(root, '.tools', 'client-venv', 'bin');

let receiver: Server;
beforeAll(async () => {
  receiver = createServer((request, response) => {
    request.resume();
    response.end();
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
});
afterAll(() => new Promise((resolve) => receiver.close(resolve)));

function run(command: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', env: { PATH: process.env.PATH, ...env }, timeout: 120_000 });
  if (result.error) throw new Error(`${command} could not run (npm test installs it into .tools/client-venv): ${result.error.message}`);
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${result.status}\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

it('a Python client generated from our document releases, updates a device and reads the results', async () => {
  const work = mkdtempSync(join(tmpdir(), 'ota-generated-client-'));
  const document = await (await fetch(`${testStack().gatewayUrl}/api/v1/openapi.json`)).text();
  writeFileSync(join(work, 'openapi.json'), document);
  run(join(venv, 'openapi-python-client'), ['generate', '--path', join(work, 'openapi.json'), '--output-path', join(work, 'ota_client'), '--meta', 'none']);

  const user = createUser();
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  const output = run(join(venv, 'python'), [join(__dirname, 'generated-client', 'flow.py'), testStack().gatewayUrl, user.token, receiverUrl], { PYTHONPATH: work });
  const seen = JSON.parse(output.trim().split('\n').pop()!) as Record<string, unknown>;

  expect(seen).toMatchObject({
    first_check: 'no_active_deployment',
    downloaded_bytes: 70_000,
    final_statuses: ['offered', 'download_started', 'downloaded', 'flashed', 'validated', 'reboot', 'confirmed'],
    confirmed_in_summary: 1,
    device_events: ['offered', 'download_started', 'downloaded', 'flashed', 'validated', 'reboot', 'confirmed'],
    webhook_secret_shown: true,
    webhooks_listed: 1,
    deliveries_status: 200,
    roles_are_one_type: true,
  });
  // The owner's personal token acts as admin; events of the system carry no role.
  expect(seen.audit_roles).toEqual(expect.arrayContaining(['admin']));
  expect((seen.audit_roles as string[]).every((role) => ['admin', 'none'].includes(role))).toBe(true);
  expect(seen.audit_actions).toEqual(expect.arrayContaining(['artifact.uploaded', 'deployment.created', 'deployment.started', 'group.member_added', 'token.created']));
});
