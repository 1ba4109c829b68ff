import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MANIFEST, api, randomBinary, setupProject, uploadForm, type ProjectFixture } from '@ota/testkit';

export interface Release {
  fixture: ProjectFixture;
  image: Buffer;
  sha256: string;
  buildNumber: number;
  deploymentId: string;
  /** The project's signing key as the device pins it: 32 raw bytes, hex. */
  publicKeyHex?: string;
}

/** A project with a release of `image` to its whole fleet; signed with a key of the project when asked. */
export async function releaseBuild(image: Buffer, options: { signed: boolean }): Promise<Release> {
  const fixture = await setupProject({ name: 'device sdk' });
  const manifest: Record<string, unknown> = { ...MANIFEST, version_label: '2.0.0' };
  let publicKeyHex: string | undefined;
  if (options.signed) {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const added = await api('POST', `/api/v1/projects/${fixture.project.id}/signing-keys/`, { token: fixture.user.token, json: { name: 'release', public_key: pem } });
    if (added.status !== 201) throw new Error(`signing key not added: ${added.status} ${JSON.stringify(added.body)}`);
    manifest.signature = sign(null, image, privateKey).toString('base64');
    publicKeyHex = publicKey.export({ type: 'spki', format: 'der' }).subarray(-32).toString('hex');
  }
  const released = await api('POST', `/api/v1/projects/${fixture.project.id}/release/`, { token: fixture.user.token, body: uploadForm(manifest, image) });
  if (released.status !== 201) throw new Error(`release refused: ${released.status} ${JSON.stringify(released.body)}`);
  return {
    fixture,
    image,
    sha256: createHash('sha256').update(image).digest('hex'),
    buildNumber: released.body.build_number,
    deploymentId: released.body.deployment_id,
    publicKeyHex,
  };
}

/** A firmware image of random bytes, with a marker the demo application's health check reads. */
export function firmwareImage(bytes: number, marker = ''): Buffer {
  const image = randomBinary(bytes);
  if (marker) Buffer.from(marker).copy(image, Math.floor(bytes / 2));
  return image;
}

/** A directory for the run's devices, with the factory image they start from. */
export function deviceWorkspace(): { root: string; factoryImage: string; factory: Buffer } {
  const root = mkdtempSync(join(tmpdir(), 'ota-devices-'));
  mkdirSync(root, { recursive: true });
  const factory = randomBinary(4096);
  const factoryImage = join(root, 'factory.bin');
  writeFileSync(factoryImage, factory);
  return { root, factoryImage, factory };
}

/** What the service recorded of a device: its reports as accepted, oldest first. */
export async function reportsOf(fixture: ProjectFixture, deviceId: string): Promise<Array<{ event: string; reason: string | null; build_number?: number | null }>> {
  const devices = await api('GET', `/api/v1/projects/${fixture.project.id}/devices/`, { token: fixture.user.token });
  const device = (devices.body as Array<{ id: string; device_id: string }>).find((candidate) => candidate.device_id === deviceId);
  if (!device) return [];
  const events = await api('GET', `/api/v1/projects/${fixture.project.id}/devices/${device.id}/events/`, { token: fixture.user.token });
  return (events.body as Array<{ event: string; reason: string | null; build_number?: number | null }>).reverse();
}
