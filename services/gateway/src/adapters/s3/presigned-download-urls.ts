import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { Logger } from '@ota/logging';
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
  private warnedTooLong = false;

  constructor(
    private readonly settings: Pick<
      GatewayConfig,
      | 'S3_PUBLIC_ENDPOINT'
      | 'S3_ENDPOINT'
      | 'S3_REGION'
      | 'S3_BUCKET'
      | 'S3_ACCESS_KEY_ID'
      | 'S3_SECRET_ACCESS_KEY'
      | 'S3_FORCE_PATH_STYLE'
      | 'OTA_URL_TTL_SECONDS'
      | 'PRESIGNED_URL_MAX_CHARS'
    >,
    private readonly logger: Pick<Logger, 'warn'>,
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

  /**
   * A GET of `storageKey` that S3 honours for OTA_URL_TTL_SECONDS from now; undefined when it is
   * longer than a device may hold (PRESIGNED_URL_MAX_CHARS), and the caller hands out its own URL.
   */
  async urlOf(storageKey: string): Promise<string | undefined> {
    const url = await getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.settings.S3_BUCKET, Key: storageKey }), {
      expiresIn: this.settings.OTA_URL_TTL_SECONDS,
    });
    const limit = this.settings.PRESIGNED_URL_MAX_CHARS;
    if (limit === 0 || url.length <= limit) return url;
    if (!this.warnedTooLong) {
      this.warnedTooLong = true;
      this.logger.warn(
        { length: url.length, limit },
        'presigned download URLs are longer than PRESIGNED_URL_MAX_CHARS (temporary S3 credentials add a session token): offers carry the gateway\'s own URL instead. Give the gateway static S3 keys, or raise the limit for devices that hold longer URLs',
      );
    }
    return undefined;
  }

  close(): void {
    this.client.destroy();
  }
}
