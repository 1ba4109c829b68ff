import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/** One key of WEBHOOK_SECRET_KEYS: its id, written beside each secret it seals, and the AES key. */
interface SecretKey {
  id: string;
  key: Buffer;
}

const SEALED = /^v1:([A-Za-z0-9_-]{1,32}):([A-Za-z0-9+/=]+):([A-Za-z0-9+/=]+):([A-Za-z0-9+/=]+)$/;

/**
 * Webhook secrets at rest: AES-256-GCM under the operator's keys (WEBHOOK_SECRET_KEYS,
 * `id:material,id:material`, the first sealing new secrets and every one opening), with the
 * webhook's id as associated data, so that a sealed secret moved to another webhook does not open.
 * Stored as `v1:<key id>:<iv>:<ciphertext>:<tag>`. A secret in plain text (stored before secrets
 * were sealed) still opens, and is reported as due for sealing under the current key, as is one
 * sealed under an older key: that is how a key is rotated (docs/operations.md).
 */
export class WebhookSecretBox {
  private readonly keys: SecretKey[];

  constructor(setting: string) {
    this.keys = setting
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean)
      .map((entry) => {
        const colon = entry.indexOf(':');
        const id = entry.slice(0, colon);
        const material = entry.slice(colon + 1);
        if (colon < 1 || !/^[A-Za-z0-9_-]{1,32}$/.test(id) || material.length < 32) {
          throw new Error('WEBHOOK_SECRET_KEYS: each key is <id>:<at least 32 characters>, the id of letters, digits, _ and -');
        }
        // Any string of enough entropy: the AES key is its SHA-256.
        return { id, key: createHash('sha256').update(material).digest() };
      });
    if (this.keys.length === 0) throw new Error('WEBHOOK_SECRET_KEYS is empty: webhook secrets need a key to be stored under');
    if (new Set(this.keys.map((key) => key.id)).size !== this.keys.length) throw new Error('WEBHOOK_SECRET_KEYS: two keys have the same id');
  }

  seal(secret: string, webhookId: string): string {
    const current = this.keys[0]!;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', current.key, iv).setAAD(Buffer.from(webhookId));
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return `v1:${current.id}:${iv.toString('base64')}:${ciphertext.toString('base64')}:${cipher.getAuthTag().toString('base64')}`;
  }

  /** The secret, and whether it should be sealed again under the current key. Throws when no key opens it. */
  open(stored: string, webhookId: string): { secret: string; reseal: boolean } {
    const sealed = SEALED.exec(stored);
    if (!sealed) return { secret: stored, reseal: true };
    const [, keyId, iv, ciphertext, tag] = sealed as unknown as [string, string, string, string, string];
    const key = this.keys.find((candidate) => candidate.id === keyId);
    if (!key) throw new Error(`a webhook secret is sealed under key "${keyId}", which WEBHOOK_SECRET_KEYS no longer lists`);
    const decipher = createDecipheriv('aes-256-gcm', key.key, Buffer.from(iv, 'base64')).setAAD(Buffer.from(webhookId));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    const secret = Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64')), decipher.final()]).toString('utf8');
    return { secret, reseal: key !== this.keys[0] };
  }
}
