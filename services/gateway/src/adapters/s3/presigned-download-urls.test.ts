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
  PRESIGNED_URL_MAX_CHARS: 600,
};
const KEY = 'artifacts/3f1c9a52-7d7e-4c55-9d1e-2b8f0e6a4c11/8a2d0b7e-5c4f-4d3a-9e1b-6f7c8d9e0a1b.bin';

function urls(overrides: Partial<typeof settings> = {}) {
  const warnings: string[] = [];
  return { urls: new PresignedDownloadUrls({ ...settings, ...overrides }, { warn: (_fields: unknown, message: string) => warnings.push(message) } as never), warnings };
}

describe('presigned download URLs', () => {
  it('address the public endpoint, not the one the services use, and expire with OTA_URL_TTL_SECONDS', async () => {
    const { urls: presigned } = urls();
    const url = new URL((await presigned.urlOf(KEY))!);
    presigned.close();
    expect(url.origin).toBe('https://cdn.example.com');
    expect(url.pathname).toBe(`/firmware/${KEY}`);
    expect(url.searchParams.get('X-Amz-Expires')).toBe('900');
    expect(url.searchParams.get('X-Amz-Credential')).toMatch(/^AKIDEXAMPLE\/\d{8}\/eu-central-1\/s3\/aws4_request$/);
  });

  it('are not handed out when temporary credentials make them longer than a device holds, with one warning', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'ASIAEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret', AWS_SESSION_TOKEN: 'T'.repeat(900) });
    try {
      const { urls: presigned, warnings } = urls({ S3_ACCESS_KEY_ID: '', S3_SECRET_ACCESS_KEY: '' });
      expect(await presigned.urlOf(KEY)).toBeUndefined();
      expect(await presigned.urlOf(KEY)).toBeUndefined();
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/PRESIGNED_URL_MAX_CHARS/);
      // Without a limit the long URL is handed out, for devices that hold it.
      const { urls: unlimited } = urls({ S3_ACCESS_KEY_ID: '', S3_SECRET_ACCESS_KEY: '', PRESIGNED_URL_MAX_CHARS: 0 });
      expect((await unlimited.urlOf(KEY))!.length).toBeGreaterThan(900);
    } finally {
      process.env = saved;
    }
  });

  it('refuse a lifetime S3 would refuse', () => {
    expect(() => urls({ OTA_URL_TTL_SECONDS: PRESIGNED_URL_MAX_SECONDS + 1 })).toThrow(/at most 604800/);
  });
});
