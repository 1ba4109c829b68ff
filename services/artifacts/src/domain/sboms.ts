import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { conflict, invalidArgument, notFound } from '@ota/errors';
import type { Artifact, ArtifactSbom } from './model';
import type { ArtifactStore, BinaryStorage, SbomComponentStore } from './ports';
import { InvalidSbom, readSbom } from './sbom';

export interface SbomsDeps {
  artifacts: Pick<ArtifactStore, 'findArtifact' | 'setSbomOnce'>;
  components: SbomComponentStore;
  storage: BinaryStorage;
  now?: () => Date;
}

/**
 * A build's SBOM (docs/api.md, "SBOMs"): read and its components indexed, kept as sent in object
 * storage under its SHA-256, and set once. A build's SBOM is never replaced: it describes the build's
 * bytes, which do not change; a wrong one means a new build.
 */
export class Sboms {
  private readonly now: () => Date;

  constructor(private readonly deps: SbomsDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  async put(projectId: string, artifactId: string, document: Buffer): Promise<{ artifact: Artifact; changed: boolean }> {
    const artifact = await this.buildOf(projectId, artifactId);
    let read;
    try {
      read = readSbom(document);
    } catch (error) {
      if (error instanceof InvalidSbom) throw invalidArgument(error.message);
      throw error;
    }
    const sha256 = createHash('sha256').update(document).digest('hex');
    if (artifact.sbom?.sha256 === sha256) return { artifact, changed: false };
    if (artifact.sbom) throw conflict(`build ${artifact.buildNumber} already has an SBOM (SHA-256 ${artifact.sbom.sha256}); a build's SBOM is not replaced`);
    const sbom: ArtifactSbom = { sha256, size: document.length, format: read.format, components: read.components.length, storageKey: `sboms/${sha256}`, uploadedAt: this.now() };
    // The document and its components first: once the build names its SBOM, both are there.
    await this.deps.storage.put(sbom.storageKey, Readable.from([document]));
    await this.deps.components.insertComponents(projectId, artifactId, sha256, read.components);
    if (await this.deps.artifacts.setSbomOnce(projectId, artifactId, sbom)) return { artifact: await this.buildOf(projectId, artifactId), changed: true };
    // Another request set the build's SBOM meanwhile: the same document, or a refusal.
    const now = await this.buildOf(projectId, artifactId);
    if (now.sbom?.sha256 === sha256) return { artifact: now, changed: false };
    await this.deps.components.deleteComponents(artifactId, sha256);
    throw conflict(`build ${now.buildNumber} already has an SBOM (SHA-256 ${now.sbom?.sha256}); a build's SBOM is not replaced`);
  }

  /** The document as it was sent. */
  async get(projectId: string, artifactId: string): Promise<{ sbom: ArtifactSbom; document: Buffer }> {
    const artifact = await this.buildOf(projectId, artifactId);
    if (!artifact.sbom) throw notFound(`build ${artifact.buildNumber} has no SBOM`);
    const chunks: Buffer[] = [];
    for await (const chunk of await this.deps.storage.get(artifact.sbom.storageKey)) chunks.push(Buffer.from(chunk));
    return { sbom: artifact.sbom, document: Buffer.concat(chunks) };
  }

  private async buildOf(projectId: string, artifactId: string): Promise<Artifact> {
    const artifact = await this.deps.artifacts.findArtifact(artifactId);
    if (!artifact || artifact.projectId !== projectId) throw notFound('no such artifact in this project');
    return artifact;
  }
}
