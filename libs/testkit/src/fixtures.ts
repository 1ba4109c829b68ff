import { randomBytes } from 'node:crypto';
import { api, createUser, type CreatedUser } from './api';

export interface ProjectFixture {
  user: CreatedUser;
  project: { id: string; name: string; slug: string; owner_id: string };
  /** A project token of `api` scope. */
  apiToken: string;
  /** A project token of `device` scope, as a fleet would carry. */
  deviceScopeToken: string;
  defaultChannelId: string;
}

/** A new user with a project, an `api` token and a `device` token: the start of most tests. */
export async function setupProject(options: { maxDevices?: number; maxUploadsPerMonth?: number; name?: string } = {}): Promise<ProjectFixture> {
  const user = createUser({ maxDevices: options.maxDevices, maxUploadsPerMonth: options.maxUploadsPerMonth });
  const created = await api('POST', '/api/v1/projects/', { token: user.token, json: { name: options.name ?? 'fixture project' } });
  if (created.status !== 201) throw new Error(`project not created: ${created.status} ${JSON.stringify(created.body)}`);
  const project = created.body;
  const token = async (scope: 'api' | 'device') => {
    const response = await api('POST', `/api/v1/projects/${project.id}/tokens/`, { token: user.token, json: { name: scope, scope, ...(scope === 'api' ? { role: 'admin' } : {}) } });
    return response.body.token as string;
  };
  const channels = await api('GET', `/api/v1/projects/${project.id}/channels/`, { token: user.token });
  return {
    user,
    project,
    apiToken: await token('api'),
    deviceScopeToken: await token('device'),
    defaultChannelId: channels.body.find((channel: { is_default: boolean }) => channel.is_default).id,
  };
}

/**
 * Gives `person` the role in the project as a person would get it (docs/api.md, "Invitations"):
 * the owner invites their e-mail, and they accept; a member already has it changed at once.
 */
export async function grantRole(fixture: ProjectFixture, person: CreatedUser, role: 'viewer' | 'operator' | 'approver' | 'admin'): Promise<void> {
  const invited = await api('POST', `/api/v1/projects/${fixture.project.id}/members/`, { token: fixture.user.token, json: { email: person.email, role } });
  if (invited.status === 200) return;
  if (invited.status !== 202) throw new Error(`invitation refused: ${invited.status} ${JSON.stringify(invited.body)}`);
  const accepted = await api('POST', `/api/v1/me/invitations/${fixture.project.id}/accept/`, { token: person.token });
  if (accepted.status !== 200 || accepted.body.role !== role) throw new Error(`invitation not accepted: ${accepted.status} ${JSON.stringify(accepted.body)}`);
}

export const checkBody = (deviceId: string, extra: Record<string, unknown> = {}) => ({
  device_id: deviceId,
  framework: 'esp_idf',
  chip_family: 'esp32',
  current_build_number: 0,
  ...extra,
});

export const MANIFEST = { version_label: '1.0.0', framework: 'esp_idf', chip_family: 'esp32' } as const;

/**
 * A device takes the build the project offers it, as the C client does: it checks from `from`, and
 * confirms the offered build. Answers the build it confirmed.
 */
export async function takeOfferedBuild(fixture: ProjectFixture, deviceId: string, from: number): Promise<number> {
  const offer = await api('POST', '/api/v1/ota/check/', { token: fixture.deviceScopeToken, json: checkBody(deviceId, { current_build_number: from }) });
  if (offer.body.status !== 'offered') throw new Error(`${deviceId} was offered nothing: ${JSON.stringify(offer.body)}`);
  const confirmed = await api('POST', '/api/v1/ota/status/', {
    token: fixture.deviceScopeToken,
    json: { device_id: deviceId, deployment_id: offer.body.deployment_id, event: 'confirmed', build_number: offer.body.build_number },
  });
  if (confirmed.body.accepted !== true) throw new Error(`${deviceId} could not confirm: ${JSON.stringify(confirmed.body)}`);
  return offer.body.build_number;
}

/** Polls until `done` holds (for what travels over NATS), or returns the last value read. */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const giveUpAt = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value) && Date.now() < giveUpAt) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = await read();
  }
  return value;
}

/**
 * Random bytes that are not an ESP-IDF application image: what most tests upload as a build. The
 * service reads a binary whose first byte is 0xE9 as an image and refuses one that does not parse
 * (docs/api.md, "The image"), so random bytes would be refused once in 256.
 */
export function randomBinary(size: number): Buffer {
  const bytes = randomBytes(size);
  if (bytes[0] === ESP_IMAGE_MAGIC) bytes[0] = 0;
  return bytes;
}

const ESP_IMAGE_MAGIC = 0xe9;
