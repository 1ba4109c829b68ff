import { createHmac, timingSafeEqual } from 'node:crypto';

/** The parts of a download URL that its signature covers, as the URL's query carries them. */
export interface SignedDownload {
  artifactId: string;
  size: string;
  /** The build's SHA-256, from which the download's ETag is made; absent from URLs of the release before ranges. */
  sha256?: string;
  expires: string;
  signature: string;
}

/**
 * Download URLs of our own streaming endpoint, signed with HMAC-SHA256 over the artifact, its size,
 * its SHA-256 and the expiry. Changing any of them, or the signature, makes the URL fail. The URL
 * carries the size and the checksum so that the download can answer ranges, ETag and 416 without
 * asking any service first.
 */
export class DownloadUrlSigner {
  constructor(
    private readonly key: string,
    private readonly ttlSeconds: number,
  ) {}

  sign(baseUrl: string, artifactId: string, size: number, sha256: string, now = Date.now()): string {
    const expires = String(Math.floor(now / 1000) + this.ttlSeconds);
    const signature = this.signature({ artifactId, size: String(size), sha256, expires });
    return `${baseUrl}/api/v1/ota/download/${artifactId}?size=${size}&sha256=${sha256}&expires=${expires}&signature=${signature}`;
  }

  /** 'ok', or why the URL is refused. */
  verify(url: SignedDownload, now = Date.now()): 'ok' | 'invalid' | 'expired' {
    const { size, sha256, expires, signature } = url;
    if (!/^\d{1,15}$/.test(size) || !/^\d{1,12}$/.test(expires) || !/^[0-9a-f]{64}$/.test(signature)) return 'invalid';
    if (sha256 !== undefined && !/^[0-9a-f]{64}$/.test(sha256)) return 'invalid';
    const expected = Buffer.from(this.signature(url), 'hex');
    if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) return 'invalid';
    return Number(expires) * 1000 < now ? 'expired' : 'ok';
  }

  private signature({ artifactId, size, sha256, expires }: Omit<SignedDownload, 'signature'>): string {
    // Without a checksum the signed text is the previous release's, so its URLs stay valid until they expire.
    const signed = `${artifactId}\n${Number(size)}\n${Number(expires)}` + (sha256 === undefined ? '' : `\n${sha256}`);
    return createHmac('sha256', this.key).update(signed).digest('hex');
  }
}
