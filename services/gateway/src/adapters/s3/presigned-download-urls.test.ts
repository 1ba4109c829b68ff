import { PRESIGNED_URL_MAX_SECONDS, PresignedDownloadUrls } from './presigned-download-urls';

const settings = {
  S3_PUBLIC_ENDPOINT: 'https://cdn.example.com',
  S3_ENDPOINT: 'http://minio.internal:9000',
  S3_REGION: 'eu-central-1',
  S3_BUCKET: 'firmware',
  S3_ACCESS_KEY_ID: 'AKIDEXAMPLE',
  S3_SECRET_ACCESS_KEY: 'secret',
  S3_FORCE_PATH_STYLE: true,
  OTA_URL_TTL_SECONDS: 900,
};

describe('presigned download URLs', () => {
  it('address the public endpoint, not the one the services use, and expire with OTA_URL_TTL_SECONDS', async () => {
    const urls = new PresignedDownloadUrls(settings);
    const url = new URL(await urls.urlOf('artifacts/p/a.bin'));
    urls.close();
    expect(url.origin).toBe('https://cdn.example.com');
    expect(url.pathname).toBe('/firmware/artifacts/p/a.bin');
    expect(url.searchParams.get('X-Amz-Expires')).toBe('900');
    expect(url.searchParams.get('X-Amz-Credential')).toMatch(/^AKIDEXAMPLE\/\d{8}\/eu-central-1\/s3\/aws4_request$/);
  });

  it('refuse a lifetime S3 would refuse', () => {
    expect(() => new PresignedDownloadUrls({ ...settings, OTA_URL_TTL_SECONDS: PRESIGNED_URL_MAX_SECONDS + 1 })).toThrow(/at most 604800/);
  });
});
