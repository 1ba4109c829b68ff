import { bool, int, loadConfig, str } from '@ota/config';
import { commonServiceSettings } from '@ota/grpc';

export const artifactsSettings = {
  ...commonServiceSettings({ grpcPort: 50052, metricsPort: 9102, database: 'ota_artifacts' }),
  S3_ENDPOINT: str('S3 endpoint URL; empty means AWS S3 of S3_REGION', ''),
  S3_REGION: str('S3 region', 'us-east-1'),
  S3_BUCKET: str('bucket that holds the firmware binaries', 'ota-artifacts'),
  S3_ACCESS_KEY_ID: str('S3 access key id; empty uses the default AWS credential chain', ''),
  S3_SECRET_ACCESS_KEY: str('S3 secret access key', ''),
  S3_FORCE_PATH_STYLE: bool('address buckets by path (MinIO, s3rver) instead of by host name', true),
  S3_CREATE_BUCKET: bool('create the bucket at start when it does not exist', true),
  SIGNED_BINARY_MAX_BYTES: int('largest binary a signed manifest may come with; it is verified whole, in memory', 16 * 1024 * 1024, 1),
  S3_PART_SIZE_BYTES: int('size of one multipart-upload part; bounds the memory an upload holds', 8 * 1024 * 1024, 5 * 1024 * 1024),
};

export type ArtifactsConfig = ReturnType<typeof loadArtifactsConfig>;
export const loadArtifactsConfig = () => loadConfig(artifactsSettings);
