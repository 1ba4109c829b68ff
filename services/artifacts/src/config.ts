import { bool, int, loadConfig, s3ConnectionSettings, str } from '@ota/config';
import { commonServiceSettings } from '@ota/grpc';

export const artifactsSettings = {
  ...commonServiceSettings({ grpcPort: 50052, metricsPort: 9102, database: 'ota_artifacts' }),
  ...s3ConnectionSettings,
  S3_CREATE_BUCKET: bool('create the bucket at start when it does not exist', true),
  SIGNED_BINARY_MAX_BYTES: int('largest binary a signed manifest may come with; it is verified whole, in memory', 16 * 1024 * 1024, 1),
  S3_PART_SIZE_BYTES: int('size of one multipart-upload part; bounds the memory an upload holds', 8 * 1024 * 1024, 5 * 1024 * 1024),
  PATCH_WORKERS: int('delta patches this process makes at once (each holds two builds in memory); 0 makes none here, leaving the jobs to other replicas', 1, 0),
  PATCH_POLL_MS: int('how long an idle patch worker waits before it looks for a job again', 2_000, 100),
  PATCH_TIMEOUT_MS: int('longest one detools run may take; past it the job fails with that reason', 120_000, 1_000),
  PATCH_MAX_IMAGE_BYTES: int('largest build a patch is made from or to; a larger one fails its job with that reason', 16 * 1024 * 1024, 1),
  PATCH_LEASE_MS: int('how long a job stays with the worker that took it; a job whose worker stopped is taken over after it', 600_000, 1_000),
  PATCH_WORK_DIR: str("where a patch job keeps its base, target and patch files while it runs; empty: the system's temporary directory", ''),
  ELF_MAX_BYTES: int("largest ELF a build's upload may have (PUT .../elf/); it passes through a file, not memory", 256 * 1024 * 1024, 1),
  COREDUMP_MAX_BYTES: int("largest core dump taken; ESP-IDF's core dump partition is 64 KB by default", 1024 * 1024, 1024),
  COREDUMP_PIECE_MAX_BYTES: int('largest piece of a core dump one request may carry', 64 * 1024, 512),
  COREDUMP_UPLOAD_TTL_MS: int('pieces of a dump whose device never finished it are dropped after this', 24 * 3_600_000, 60_000),
  CRASH_DECODE_WORKERS: int('core dumps this process decodes at once (each runs one gdb); 0 decodes none here, leaving them to other replicas', 1, 0),
  CRASH_DECODE_POLL_MS: int('how long an idle decode worker waits before it looks for a dump again', 1_000, 100),
  CRASH_DECODE_LEASE_MS: int('how long a dump stays with the worker that took it; one whose worker stopped is taken over after it', 120_000, 1_000),
  GDB_COMMAND: str("the gdb that unwinds core dumps (Debian's gdb-multiarch; the container image has it)", 'gdb-multiarch'),
  GDB_TIMEOUT_MS: int('longest one gdb run may take; past it the dump is kept as read, with that reason', 30_000, 1_000),
  CRASH_WORK_DIR: str("where a decode keeps the dump and the ELF while gdb reads them; empty: the system's temporary directory", ''),
  DETOOLS_COMMAND: str('the detools command that makes and checks patches (pinned detools 0.53.0; the container image has it at /opt/detools/bin/detools)', 'detools'),
};

export type ArtifactsConfig = ReturnType<typeof loadArtifactsConfig>;
export const loadArtifactsConfig = () => loadConfig(artifactsSettings);
