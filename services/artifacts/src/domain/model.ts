import type { BuildRequirements } from '@ota/manifest';

export interface Artifact extends BuildRequirements {
  id: string;
  projectId: string;
  buildNumber: number;
  versionLabel: string;
  releaseNotes: string;
  checksumSha256: string;
  fileSize: number;
  archived: boolean;
  signature: string;
  signingKeyId: string;
  /** Where the binary lives in object storage. */
  storageKey: string;
  createdAt: Date;
}
