import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { conflict, invalidArgument, notFound } from '@ota/errors';
import type { Artifact, ArtifactSbom } from './model';
import type { ArtifactStore, BinaryStorage, ComponentQuery, SbomComponentStore, StoredSbomComponent } from './ports';
import { InvalidSbom, readSbom } from './sbom';
import { inRange, InvalidVersionRange, parseVersionRange, type VersionRange } from './version-range';

export interface SbomsDeps {
  artifacts: Pick<ArtifactStore, 'findArtifact' | 'setSbomOnce' | 'listArtifacts'>;
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

  /**
   * The builds of the project whose SBOM lists the component within `versions` (docs/api.md,
   * "Exposure"), and the builds without an SBOM, of which it cannot be said.
   */
  async findComponents(projectId: string, request: { name: string; purl: string; cpe: string; versions: string }): Promise<{ matches: Array<{ artifact: Artifact; component: StoredSbomComponent }>; withoutSbom: Artifact[] }> {
    const query = componentQueryOf(request);
    let range: VersionRange | undefined;
    try {
      range = request.versions ? parseVersionRange(request.versions) : undefined;
    } catch (error) {
      if (error instanceof InvalidVersionRange) throw invalidArgument(`versions: ${error.message}`);
      throw error;
    }
    const [found, builds] = await Promise.all([this.deps.components.findComponents(projectId, query, MAX_MATCHES + 1), this.deps.artifacts.listArtifacts(projectId)]);
    if (found.length > MAX_MATCHES) throw invalidArgument(`more than ${MAX_MATCHES} components of the project's SBOMs match: name the component more closely`);
    const byId = new Map(builds.map((build) => [build.id, build]));
    const matches = found.flatMap((component) => {
      const artifact = byId.get(component.artifactId);
      // Only a build's own document counts: components of one it refused are not its.
      if (!artifact || artifact.sbom?.sha256 !== component.sbomSha256) return [];
      if (range && !inRange(component.version, range)) return [];
      return [{ artifact, component }];
    });
    matches.sort((a, b) => a.artifact.buildNumber - b.artifact.buildNumber || a.component.name.localeCompare(b.component.name));
    return { matches, withoutSbom: builds.filter((build) => !build.sbom) };
  }

  private async buildOf(projectId: string, artifactId: string): Promise<Artifact> {
    const artifact = await this.deps.artifacts.findArtifact(artifactId);
    if (!artifact || artifact.projectId !== projectId) throw notFound('no such artifact in this project');
    return artifact;
  }
}

/** Components one exposure query may find across the project's SBOMs. */
const MAX_MATCHES = 10_000;

function componentQueryOf(request: { name: string; purl: string; cpe: string }): ComponentQuery {
  const given = [request.name, request.purl, request.cpe].filter(Boolean).length;
  if (given !== 1) throw invalidArgument('name the component one way: name, purl or cpe');
  if (request.name) {
    if (request.name.length > 2_048) throw invalidArgument('name is longer than 2048 characters');
    return { name: request.name };
  }
  if (request.purl) {
    if (!/^pkg:[a-z0-9.+-]+\/[^@?#]+$/i.test(request.purl)) throw invalidArgument('purl is a package URL without its version, such as pkg:github/mbed-tls/mbedtls; give the versions apart, in versions');
    return { purl: request.purl };
  }
  if (!/^cpe:2\.3:[aho]:[^:]+:[^:]+(:[^:]*)*$/.test(request.cpe)) throw invalidArgument('cpe names at least a part, vendor and product, such as cpe:2.3:a:arm:mbed_tls');
  return { cpe: request.cpe };
}
