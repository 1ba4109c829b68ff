import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { api, eventually, makeCoreDump, makeEspBuild, setupProject, testStack, uploadForm } from '@ota/testkit';
import { DeviceProcess } from './harness/device-process';
import { deviceWorkspace } from './harness/fleet-fixture';

// The linux client sending a core dump (--coredump FILE, as the ESP-IDF port sends the core dump
// partition's) to the real stack through a link that the service answers piece by piece: the
// service decodes it with the build's ELF, and the device deletes its copy only then.

const workspace = deviceWorkspace();

test('a device sends its core dump whole, the service decodes it, and the device erases it', async () => {
  const f = await setupProject({ name: 'device core dump' });
  const build = makeEspBuild({ crashCode: true, version: '7.0.0' });
  const manifest = { version_label: '7.0.0', framework: 'esp_idf', chip_family: 'esp32c3' };
  const artifact = (await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm(manifest, build.image) })).body;
  expect((await api('PUT', `/api/v1/projects/${f.project.id}/artifacts/${artifact.id}/elf/`, { token: f.user.token, body: build.elf })).status).toBe(200);

  const deviceId = 'dumping-unit';
  const dir = join(workspace.root, deviceId);
  const args = ['--server', testStack().gatewayUrl, '--device-id', deviceId, '--chip', 'esp32c3', '--factory', workspace.factoryImage, '--poll', '1'];
  // Its first run checks in: the service knows the device before it sends a dump.
  const first = new DeviceProcess(dir, args, f.deviceScopeToken);
  first.start();
  await first.settle(60_000);

  // Larger than four of the SDK's 4 KiB pieces, so that it goes in several requests.
  const dump = makeCoreDump({ elf: build.elf, taskName: 'sensor', stackPadding: 14_000 });
  const dumpPath = join(workspace.root, `${deviceId}.coredump`);
  writeFileSync(dumpPath, dump);
  const second = new DeviceProcess(dir, [...args, '--coredump', dumpPath], f.deviceScopeToken);
  second.start();
  await second.settle(60_000);
  expect(existsSync(dumpPath)).toBe(false);
  expect(readFileSync(`${dir}.log`, 'utf8')).toContain(`core dump of ${dump.length} bytes sent`);

  const groups = await eventually(
    async () => (await api('GET', `/api/v1/projects/${f.project.id}/crashes/`, { token: f.user.token })).body as Array<Record<string, any>>,
    (list) => list.length === 1 && list[0]!.decoding === 'decoded',
  );
  expect(groups[0]).toMatchObject({ artifact_id: artifact.id, reason: 'load_access_fault', count: 1, devices: 1 });
  expect(groups[0]!.frames.map((frame: { function: string }) => frame.function)).toEqual(['read_sensor', 'average_reading', 'sensor_task']);
  const detail = (await api('GET', `/api/v1/projects/${f.project.id}/crashes/${groups[0]!.id}/`, { token: f.user.token })).body;
  expect(detail.samples[0]).toMatchObject({ device_id: deviceId, task: 'sensor', size: dump.length });
});
