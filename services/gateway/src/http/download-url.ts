import { createHmac, timingSafeEqual } from 'node:crypto';

/** The parts of a download URL that its signature covers, as the URL's query carries them. */
export interface SignedDownload {
  artifactId: string;
  size: string;
  /** The build's SHA-256, from which the download's ETag is made; absent from URLs of the release before ranges. */
  sha256?: string;
  /** The offer the URL was made for (all three, or none in URLs of the release before the emergency stop). */
  deployment?: string;
  device?: string;
  token?: string;
  /** Set: the URL is of the delta patch to the build from the build with this SHA-256; size and sha256 are the patch's. */
  patch?: string;
  expires: string;
  signature: string;
}

/** The offer a download URL is bound to: refused once it no longer stands (docs/api.md, "Stopping devices mid-update"). */
export interface OfferBinding {
  deploymentId: string;
  /** The unit's own device_id string. */
  deviceId: string;
  /** The id of the token the check came with. */
  tokenId: string;
}

export interface DownloadToSign {
  artifactId: string;
  size: number;
  sha256: string;
  offer: OfferBinding;
  /** For a delta patch's URL: the SHA-256 of the build it starts from (size and sha256 are then the patch's). */
  patchBase?: string;
}

const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const DEVICE_ID_TEXT = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Download URLs of our own streaming endpoint, signed with HMAC-SHA256 over the artifact, its size,
 * its SHA-256, the offer it was made for (deployment, device, token) and the expiry. Changing any
 * of them, or the signature, makes the URL fail. The URL carries the size and the checksum so that
 * the download can answer ranges, ETag and 416 without reading the build, and the offer so that it
 * can be refused once the offer no longer stands.
 */
export class DownloadUrlSigner {
  constructor(
    private readonly key: string,
    private readonly ttlSeconds: number,
  ) {}

  sign(baseUrl: string, { artifactId, size, sha256, offer, patchBase }: DownloadToSign, now = Date.now()): string {
    const expires = String(Math.floor(now / 1000) + this.ttlSeconds);
    const bound = { deployment: offer.deploymentId, device: offer.deviceId, token: offer.tokenId, ...(patchBase ? { patch: patchBase } : {}) };
    const signature = this.signature({ artifactId, size: String(size), sha256, ...bound, expires });
    const query = new URLSearchParams({ size: String(size), sha256, ...bound, expires, signature });
    return `${baseUrl}/api/v1/ota/download/${artifactId}?${query.toString()}`;
  }

  /** 'ok', or why the URL is refused. */
  verify(url: SignedDownload, now = Date.now()): 'ok' | 'invalid' | 'expired' {
    const { size, sha256, deployment, device, token, patch, expires, signature } = url;
    if (!/^\d{1,15}$/.test(size) || !/^\d{1,12}$/.test(expires) || !/^[0-9a-f]{64}$/.test(signature)) return 'invalid';
    if (sha256 !== undefined && !/^[0-9a-f]{64}$/.test(sha256)) return 'invalid';
    const bindings = [deployment, device, token].filter((part) => part !== undefined).length;
    if (bindings !== 0 && (bindings !== 3 || sha256 === undefined)) return 'invalid';
    if (bindings === 3 && (!UUID_TEXT.test(deployment!) || !DEVICE_ID_TEXT.test(device!) || !UUID_TEXT.test(token!))) return 'invalid';
    if (patch !== undefined && (bindings !== 3 || !/^[0-9a-f]{64}$/.test(patch))) return 'invalid';
    const expected = Buffer.from(this.signature(url), 'hex');
    if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) return 'invalid';
    return Number(expires) * 1000 < now ? 'expired' : 'ok';
  }

  private signature({ artifactId, size, sha256, deployment, device, token, patch, expires }: Omit<SignedDownload, 'signature'>): string {
    // Without a checksum, or without an offer, the signed text is that of a release before, so its
    // URLs stay valid until they expire; a patch's URL signs its base too, so it reads no other object.
    const signed =
      `${artifactId}\n${Number(size)}\n${Number(expires)}` +
      (sha256 === undefined ? '' : `\n${sha256}`) +
      (deployment === undefined ? '' : `\n${deployment}\n${device}\n${token}`) +
      (patch === undefined ? '' : `\npatch\n${patch}`);
    return createHmac('sha256', this.key).update(signed).digest('hex');
  }
}
