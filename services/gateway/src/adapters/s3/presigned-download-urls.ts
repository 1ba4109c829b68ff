import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { GatewayConfig } from '../../config';

/** SigV4 refuses a presigned URL that lives longer than seven days. */
export const PRESIGNED_URL_MAX_SECONDS = 7 * 24 * 3600;

/**
 * Download URLs that object storage serves itself (DOWNLOAD_URLS=presigned): a presigned GET of the
 * build's object, addressed at the endpoint devices reach. Signing is local computation with the
 * gateway's S3 credentials (a read-only key is enough); nothing is sent to S3 until a device
 * follows the URL. S3 answers `Range` like our own endpoint, so resumed downloads keep working.
 */
export class PresignedDownloadUrls {
  private readonly client: S3Client;

  constructor(
    private readonly settings: Pick<
      GatewayConfig,
      'S3_PUBLIC_ENDPOINT' | 'S3_ENDPOINT' | 'S3_REGION' | 'S3_BUCKET' | 'S3_ACCESS_KEY_ID' | 'S3_SECRET_ACCESS_KEY' | 'S3_FORCE_PATH_STYLE' | 'OTA_URL_TTL_SECONDS'
    >,
  ) {
    if (settings.OTA_URL_TTL_SECONDS > PRESIGNED_URL_MAX_SECONDS) {
      throw new Error(`OTA_URL_TTL_SECONDS must be at most ${PRESIGNED_URL_MAX_SECONDS} with DOWNLOAD_URLS=presigned: S3 refuses longer-lived presigned URLs`);
    }
    const endpoint = settings.S3_PUBLIC_ENDPOINT || settings.S3_ENDPOINT;
    this.client = new S3Client({
      region: settings.S3_REGION,
      ...(endpoint ? { endpoint } : {}),
      forcePathStyle: settings.S3_FORCE_PATH_STYLE,
      ...(settings.S3_ACCESS_KEY_ID ? { credentials: { accessKeyId: settings.S3_ACCESS_KEY_ID, secretAccessKey: settings.S3_SECRET_ACCESS_KEY } } : {}),
    });
  }

  /** A GET of `storageKey` that S3 honours for OTA_URL_TTL_SECONDS from now. */
  urlOf(storageKey: string): Promise<string> {
    return getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.settings.S3_BUCKET, Key: storageKey }), {
      expiresIn: this.settings.OTA_URL_TTL_SECONDS,
    });
  }

  close(): void {
    this.client.destroy();
  }
}
