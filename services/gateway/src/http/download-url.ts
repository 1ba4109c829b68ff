import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Download URLs of our own streaming endpoint, signed with HMAC-SHA256 over the artifact, its size
 * and the expiry. Changing any of them, or the signature, makes the URL fail.
 */
export class DownloadUrlSigner {
  constructor(
    private readonly key: string,
    private readonly ttlSeconds: number,
  ) {}

  sign(baseUrl: string, artifactId: string, size: number, now = Date.now()): string {
    const expires = Math.floor(now / 1000) + this.ttlSeconds;
    const signature = this.signature(artifactId, size, expires);
    return `${baseUrl}/api/v1/ota/download/${artifactId}?size=${size}&expires=${expires}&signature=${signature}`;
  }

  /** 'ok', or why the URL is refused. */
  verify(artifactId: string, size: string, expires: string, signature: string, now = Date.now()): 'ok' | 'invalid' | 'expired' {
    if (!/^\d{1,15}$/.test(size) || !/^\d{1,12}$/.test(expires) || !/^[0-9a-f]{64}$/.test(signature)) return 'invalid';
    const expected = Buffer.from(this.signature(artifactId, Number(size), Number(expires)), 'hex');
    if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) return 'invalid';
    return Number(expires) * 1000 < now ? 'expired' : 'ok';
  }

  private signature(artifactId: string, size: number, expires: number): string {
    return createHmac('sha256', this.key).update(`${artifactId}\n${size}\n${expires}`).digest('hex');
  }
}
