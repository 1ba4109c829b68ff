import { createHmac } from 'node:crypto';
import { DownloadUrlSigner, type SignedDownload } from './download-url';

const signer = new DownloadUrlSigner('test-key', 900);
const artifactId = '5b0c5c8e-8c1e-4f7e-9a3e-0a0c5c8e8c1e';
const sha256 = 'ab'.repeat(32);

const offer = { deploymentId: '7b0c5c8e-8c1e-4f7e-9a3e-0a0c5c8e8c1e', deviceId: 'unit-1:a.b', tokenId: '8b0c5c8e-8c1e-4f7e-9a3e-0a0c5c8e8c1e' };

function parts(url: string): SignedDownload {
  const parsed = new URL(url);
  return {
    artifactId: parsed.pathname.split('/').pop()!,
    size: parsed.searchParams.get('size')!,
    sha256: parsed.searchParams.get('sha256') ?? undefined,
    deployment: parsed.searchParams.get('deployment') ?? undefined,
    device: parsed.searchParams.get('device') ?? undefined,
    token: parsed.searchParams.get('token') ?? undefined,
    expires: parsed.searchParams.get('expires')!,
    signature: parsed.searchParams.get('signature')!,
  };
}

describe('signed download URLs', () => {
  const now = 1_700_000_000_000;
  const signed = parts(signer.sign('http://gw', { artifactId, size: 1234, sha256, offer }, now));

  it('carry the size, the checksum and the offer, and verify as signed until they expire', () => {
    expect(signed).toMatchObject({ artifactId, size: '1234', sha256, deployment: offer.deploymentId, device: offer.deviceId, token: offer.tokenId });
    expect(signer.verify(signed, now)).toBe('ok');
    expect(signer.verify(signed, now + 901_000)).toBe('expired');
  });

  it('fail once any part is altered', () => {
    expect(signer.verify({ ...signed, artifactId: '6b0c5c8e-8c1e-4f7e-9a3e-0a0c5c8e8c1e' }, now)).toBe('invalid');
    expect(signer.verify({ ...signed, size: '1235' }, now)).toBe('invalid');
    expect(signer.verify({ ...signed, sha256: 'cd'.repeat(32) }, now)).toBe('invalid');
    expect(signer.verify({ ...signed, sha256: undefined }, now)).toBe('invalid');
    expect(signer.verify({ ...signed, sha256: 'not hex' }, now)).toBe('invalid');
    expect(signer.verify({ ...signed, expires: String(Number(signed.expires) + 60) }, now)).toBe('invalid');
    expect(signer.verify({ ...signed, signature: signed.signature.replace(/.$/, (c) => (c === '0' ? '1' : '0')) }, now)).toBe('invalid');
    expect(signer.verify({ ...signed, signature: 'zz' }, now)).toBe('invalid');
  });

  it('fail once the offer they were made for is altered or stripped', () => {
    expect(signer.verify({ ...signed, deployment: '9b0c5c8e-8c1e-4f7e-9a3e-0a0c5c8e8c1e' }, now)).toBe('invalid');
    expect(signer.verify({ ...signed, device: 'unit-2' }, now)).toBe('invalid');
    expect(signer.verify({ ...signed, token: '9b0c5c8e-8c1e-4f7e-9a3e-0a0c5c8e8c1e' }, now)).toBe('invalid');
    expect(signer.verify({ ...signed, deployment: undefined, device: undefined, token: undefined }, now)).toBe('invalid');
    expect(signer.verify({ ...signed, token: undefined }, now)).toBe('invalid');
    expect(signer.verify({ ...signed, device: 'not a device id' }, now)).toBe('invalid');
  });

  it('still accept a URL of the release before offers were bound, until it expires', () => {
    const expires = String(now / 1000 + 900);
    const signature = createHmac('sha256', 'test-key').update(`${artifactId}\n1234\n${expires}\n${sha256}`).digest('hex');
    expect(signer.verify({ artifactId, size: '1234', sha256, expires, signature }, now)).toBe('ok');
  });

  it('fail under another key', () => {
    expect(new DownloadUrlSigner('other-key', 900).verify(signed, now)).toBe('invalid');
  });

  it('still accept a URL of the release before checksums, until it expires', () => {
    const expires = String(now / 1000 + 900);
    const signature = createHmac('sha256', 'test-key').update(`${artifactId}\n1234\n${expires}`).digest('hex');
    expect(signer.verify({ artifactId, size: '1234', expires, signature }, now)).toBe('ok');
  });
});
