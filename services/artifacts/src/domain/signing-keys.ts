import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { invalidArgument } from '@ota/errors';

export interface SigningKey {
  id: string;
  projectId: string;
  name: string;
  /** PEM (SPKI). */
  publicKey: string;
  /** SHA-256 hex of the raw 32-byte key. */
  fingerprint: string;
  createdAt: Date;
}

// DER prefix of an Ed25519 SubjectPublicKeyInfo; the 32 raw key bytes follow it.
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** Accepts an Ed25519 public key as PEM (SPKI) or as base64 of its 32 raw bytes. */
export function parseEd25519PublicKey(text: string): { pem: string; fingerprint: string } {
  let key: KeyObject;
  try {
    const trimmed = text.trim();
    if (trimmed.startsWith('-----BEGIN')) {
      key = createPublicKey({ key: trimmed, format: 'pem' });
    } else {
      const raw = Buffer.from(trimmed, 'base64');
      if (raw.length !== 32 || raw.toString('base64').replace(/=+$/, '') !== trimmed.replace(/=+$/, '')) throw new Error('not 32 bytes');
      key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
    }
  } catch {
    throw invalidArgument('public_key must be an Ed25519 public key: PEM (SPKI), or base64 of its 32 raw bytes');
  }
  if (key.asymmetricKeyType !== 'ed25519') throw invalidArgument('public_key must be an Ed25519 key');
  const der = key.export({ format: 'der', type: 'spki' });
  const raw = der.subarray(der.length - 32);
  return {
    pem: key.export({ format: 'pem', type: 'spki' }).toString(),
    fingerprint: createHash('sha256').update(raw).digest('hex'),
  };
}

/** The key among `keys` under which `signature` (base64) verifies the binary, if any. */
export function findSigningKey(binary: Buffer, signature: string, keys: readonly SigningKey[]): SigningKey | undefined {
  const bytes = Buffer.from(signature, 'base64');
  if (bytes.length !== 64) return undefined;
  return keys.find((key) => verify(null, binary, createPublicKey(key.publicKey), bytes));
}
