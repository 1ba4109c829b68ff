import { createHash } from 'node:crypto';
import { api, createUser, randomBinary, uploadForm } from '@ota/testkit';

// The foundation's first path, through the real gateway, real gRPC between the services, and real
// FerretDB, s3rver and NATS.

const manifest = { version_label: '1.0.0', framework: 'esp_idf', chip_family: 'esp32s3' };

async function newProject() {
  const user = createUser();
  const project = await api('POST', '/api/v1/projects/', { token: user.token, json: { name: 'Greenhouse sensors' } });
  expect(project.status).toBe(201);
  return { user, project: project.body };
}

describe('the first path, end to end', () => {
  it('releases a build, offers it to a device, serves its bytes and records the confirmation', async () => {
    const { user, project } = await newProject();
    expect(project.slug).toBe('greenhouse-sensors');

    const channels = await api('GET', `/api/v1/projects/${project.id}/channels/`, { token: user.token });
    expect(channels.status).toBe(200);
    expect(channels.body).toEqual([expect.objectContaining({ name: 'stable', is_default: true })]);

    const deviceToken = await api('POST', `/api/v1/projects/${project.id}/tokens/`, {
      token: user.token,
      json: { name: 'fleet', scope: 'device' },
    });
    expect(deviceToken.status).toBe(201);
    expect(deviceToken.body.token).toMatch(/^ota_prj_/);
    expect(deviceToken.body.prefix).toBe(deviceToken.body.token.slice(0, 12));

    // Larger than one S3 part would be in a small config, and not a multiple of any chunk size.
    const binary = randomBinary(3 * 1024 * 1024 + 17);
    const release = await api('POST', `/api/v1/projects/${project.id}/release/`, {
      token: user.token,
      body: uploadForm(manifest, binary),
    });
    expect(release.status).toBe(201);
    expect(release.body).toEqual({
      artifact_id: expect.any(String),
      build_number: 1,
      deployment_id: expect.any(String),
      state: 'active',
      channel: 'stable',
    });

    const check = await api('POST', '/api/v1/ota/check/', {
      token: deviceToken.body.token,
      json: { device_id: 'sensor-0001', framework: 'esp_idf', chip_family: 'esp32s3', current_build_number: 0, version_label: '0.9.0' },
    });
    expect(check.status).toBe(200);
    expect(check.body).toMatchObject({
      update_available: true,
      build_number: 1,
      version: '1.0.0',
      checksum: createHash('sha256').update(binary).digest('hex'),
      size: binary.length,
      deployment_id: release.body.deployment_id,
    });

    const download = await fetch(check.body.url);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(binary)).toBe(true);

    const status = await api('POST', '/api/v1/ota/status/', {
      token: deviceToken.body.token,
      json: { device_id: 'sensor-0001', deployment_id: release.body.deployment_id, event: 'confirmed', build_number: 1 },
    });
    expect(status.status).toBe(200);
    expect(status.body).toEqual({ accepted: true, final_status: 'confirmed' });

    const again = await api('POST', '/api/v1/ota/check/', {
      token: deviceToken.body.token,
      json: { device_id: 'sensor-0001', framework: 'esp_idf', chip_family: 'esp32s3', current_build_number: 1 },
    });
    expect(again.body).toMatchObject({ update_available: false, status: 'up_to_date' });

    const devices = await api('GET', `/api/v1/projects/${project.id}/devices/`, { token: user.token });
    expect(devices.status).toBe(200);
    const deviceUuid = devices.body.find((device: { device_id: string }) => device.device_id === 'sensor-0001').id;
    const detail = await api('GET', `/api/v1/projects/${project.id}/devices/${deviceUuid}/`, { token: user.token });
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({ device_id: 'sensor-0001', current_build_number: 1, last_ota_status: 'confirmed' });
  });

  it('refuses a tampered or expired download URL', async () => {
    const { user, project } = await newProject();
    const deviceToken = await api('POST', `/api/v1/projects/${project.id}/tokens/`, { token: user.token, json: { name: 'fleet', scope: 'device' } });
    await api('POST', `/api/v1/projects/${project.id}/release/`, { token: user.token, body: uploadForm(manifest, randomBinary(1000)) });
    const check = await api('POST', '/api/v1/ota/check/', {
      token: deviceToken.body.token,
      json: { device_id: 'sensor-0002', framework: 'esp_idf', chip_family: 'esp32s3', current_build_number: 0 },
    });
    const url = new URL(check.body.url);
    url.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
    expect((await fetch(url)).status).toBe(403);
    url.searchParams.set('expires', '1000');
    expect((await fetch(url)).status).toBe(403);
  });
});
