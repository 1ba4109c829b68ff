import { bool, int, loadConfig, s3ConnectionSettings } from '@ota/config';
import { commonServiceSettings } from '@ota/grpc';

export const artifactsSettings = {
  ...commonServiceSettings({ grpcPort: 50052, metricsPort: 9102, database: 'ota_artifacts' }),
  ...s3ConnectionSettings,
  S3_CREATE_BUCKET: bool('create the bucket at start when it does not exist', true),
  SIGNED_BINARY_MAX_BYTES: int('largest binary a signed manifest may come with; it is verified whole, in memory', 16 * 1024 * 1024, 1),
  S3_PART_SIZE_BYTES: int('size of one multipart-upload part; bounds the memory an upload holds', 8 * 1024 * 1024, 5 * 1024 * 1024),
};

export type ArtifactsConfig = ReturnType<typeof loadArtifactsConfig>;
export const loadArtifactsConfig = () => loadConfig(artifactsSettings);
