import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { api, makeEspImage, setupProject, testStack, uploadForm } from '@ota/testkit';
import { DeviceProcess } from './harness/device-process';
import { deviceWorkspace } from './harness/fleet-fixture';

// The linux client reporting its chip revision and eFuse secure version (--chip-revision,
// --secure-version) on the real stack: a device whose bootloader would refuse the released ESP32-C3
// image is told why and keeps its build; one it would boot installs the image's exact bytes.

const workspace = deviceWorkspace();

test('a device is offered only an image its bootloader would boot, and says why it was not', async () => {
  const f = await setupProject({ name: 'device image' });
  // Chip revisions v0.3 to v1.99, anti-rollback version 2: a raise the release acknowledges.
  const image = makeEspImage({ minChipRevision: 3, maxChipRevision: 199, secureVersion: 2, tableBytes: 40_000 });
  const manifest = { version_label: '2.0.0', framework: 'esp_idf', chip_family: 'esp32c3' };
  const released = await api('POST', `/api/v1/projects/${f.project.id}/release/`, {
    token: f.user.token,
    body: uploadForm(manifest, image, { acknowledge_secure_version_raise: 'true' }),
  });
  expect(released.status).toBe(201);

  const run = async (deviceId: string, reported: string[]) => {
    const device = new DeviceProcess(
      join(workspace.root, deviceId),
      ['--server', testStack().gatewayUrl, '--device-id', deviceId, '--chip', 'esp32c3', '--factory', workspace.factoryImage, '--poll', '1', '--trial-timeout', '2', ...reported],
      f.deviceScopeToken,
    );
    device.start();
    const outcome = await device.settle(60_000);
    return { outcome, device };
  };

  const old = await run('img-v0.2', ['--chip-revision', '2']);
  expect(old.outcome).toMatchObject({ outcome: 'chip_revision_unsupported', running_build: 0 });
  const burnt = await run('img-sv3', ['--chip-revision', '3', '--secure-version', '3']);
  expect(burnt.outcome).toMatchObject({ outcome: 'secure_version_too_low', running_build: 0 });

  const fits = await run('img-v1.1', ['--chip-revision', '101', '--secure-version', '2']);
  expect(fits.outcome).toMatchObject({ outcome: 'confirmed', running_build: released.body.build_number });
  expect(fits.device.runningImage().sha256).toBe(createHash('sha256').update(image).digest('hex'));

  // The flags take what the API takes, and nothing else.
  const refused = new DeviceProcess(join(workspace.root, 'img-bad'), ['--server', testStack().gatewayUrl, '--device-id', 'img-bad', '--chip-revision', '70000'], f.deviceScopeToken);
  refused.start();
  await expect(refused.settle(10_000)).rejects.toThrow(/exited 2/);
});
