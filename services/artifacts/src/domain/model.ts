export interface Artifact {
  id: string;
  projectId: string;
  buildNumber: number;
  versionLabel: string;
  framework: string;
  chipFamily: string;
  boardId: string;
  hardwareRevision: string;
  partitionProfile: string;
  minNvsSchemaVersion: number | null;
  securityMode: string;
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
