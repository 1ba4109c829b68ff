import type { BuildRequirements, EspImage } from '@ota/manifest';

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
  /** What the binary says of itself when it is an ESP-IDF application image; null for other bytes. */
  image: EspImage | null;
  /** The ELF the image was made from, once CI uploaded it: crashes of the build are decoded with it. */
  elf: ArtifactElf | null;
  /** The build's SBOM, once uploaded (docs/api.md, "SBOMs"). */
  sbom: ArtifactSbom | null;
  createdAt: Date;
}

export interface ArtifactSbom {
  sha256: string;
  size: number;
  /** How it was recognised (sbom.ts): `spdx-2.2-tag-value`, `cyclonedx-1.6-json`, ... */
  format: string;
  components: number;
  /** Where the document lives in object storage: by its SHA-256. */
  storageKey: string;
  uploadedAt: Date;
}

export interface ArtifactElf {
  sha256: string;
  size: number;
  /** Where it lives in object storage: by its SHA-256. */
  storageKey: string;
  uploadedAt: Date;
}

/** What a patch job is doing: waiting for a worker, being made, published, or given up on. */
export type PatchState = 'queued' | 'building' | 'ready' | 'failed';

/**
 * A delta patch from one build of a project to another (docs/api.md, "Delta patches"): made by a
 * worker, never on the check path, and published (`ready`) only once an independent apply of it to
 * the base gave the target's SHA-256.
 */
export interface Patch {
  /** One per project, base bytes, target bytes and format: asking twice finds the same patch. */
  id: string;
  projectId: string;
  baseArtifactId: string;
  targetArtifactId: string;
  baseSha256: string;
  targetSha256: string;
  format: string;
  state: PatchState;
  /** Why it failed; "" otherwise. */
  reason: string;
  /** The patch's own bytes and SHA-256, once ready. */
  size: number;
  sha256: string;
  /** Where the patch lives in object storage: by its base and target bytes and its format. */
  storageKey: string;
  attempts: number;
  createdAt: Date;
  updatedAt: Date;
  /** A building job whose worker stopped is taken again after this. */
  leaseUntil: Date | null;
}
