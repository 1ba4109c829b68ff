import { DownloadUrlSigner } from './download-url';

const signer = new DownloadUrlSigner('test-key', 900);
const artifactId = '5b0c5c8e-8c1e-4f7e-9a3e-0a0c5c8e8c1e';

function parts(url: string) {
  const parsed = new URL(url);
  return {
    size: parsed.searchParams.get('size')!,
    expires: parsed.searchParams.get('expires')!,
    signature: parsed.searchParams.get('signature')!,
  };
}

describe('signed download URLs', () => {
  const now = 1_700_000_000_000;
  const { size, expires, signature } = parts(signer.sign('http://gw', artifactId, 1234, now));

  it('verify as signed until they expire', () => {
    expect(signer.verify(artifactId, size, expires, signature, now)).toBe('ok');
    expect(signer.verify(artifactId, size, expires, signature, now + 901_000)).toBe('expired');
  });

  it('fail once any part is altered', () => {
    expect(signer.verify('6b0c5c8e-8c1e-4f7e-9a3e-0a0c5c8e8c1e', size, expires, signature, now)).toBe('invalid');
    expect(signer.verify(artifactId, '1235', expires, signature, now)).toBe('invalid');
    expect(signer.verify(artifactId, size, String(Number(expires) + 60), signature, now)).toBe('invalid');
    expect(signer.verify(artifactId, size, expires, signature.replace(/.$/, (c) => (c === '0' ? '1' : '0')), now)).toBe('invalid');
    expect(signer.verify(artifactId, size, expires, 'zz', now)).toBe('invalid');
  });

  it('fail under another key', () => {
    expect(new DownloadUrlSigner('other-key', 900).verify(artifactId, size, expires, signature, now)).toBe('invalid');
  });
});
