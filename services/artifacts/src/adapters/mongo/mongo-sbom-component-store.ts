import { collectionOf, isDuplicateKey } from '@ota/mongo';
import type { ComponentQuery, SbomComponentStore, StoredSbomComponent } from '../../domain/ports';
import type { SbomComponent } from '../../domain/sbom';
import type { ArtifactModels, SbomComponentDoc } from './models';

/** Components are written this many at a time. */
const BATCH = 1_000;

/** Each build's SBOM components in `sbom_components`, by name, purl and CPE. */
export class MongoSbomComponentStore implements SbomComponentStore {
  constructor(private readonly models: ArtifactModels) {}

  async insertComponents(projectId: string, artifactId: string, sbomSha256: string, components: SbomComponent[]): Promise<void> {
    const docs: SbomComponentDoc[] = components.map((component, index) => ({
      _id: `${artifactId}:${sbomSha256}:${index}`,
      project_id: projectId,
      artifact_id: artifactId,
      sbom_sha256: sbomSha256,
      name: component.name,
      name_key: component.name.toLowerCase(),
      version: component.version,
      purl: component.purl,
      cpes: component.cpes,
      supplier: component.supplier,
      hashes: component.hashes,
    }));
    for (let start = 0; start < docs.length; start += BATCH) {
      try {
        await collectionOf(this.models.SbomComponent).insertMany(docs.slice(start, start + BATCH), { ordered: false });
      } catch (error) {
        // The same document sent twice at once: its components are the same, by id.
        if (!isDuplicateKey(error)) throw error;
      }
    }
  }

  async deleteComponents(artifactId: string, sbomSha256: string): Promise<void> {
    await this.models.SbomComponent.deleteMany({ artifact_id: artifactId, sbom_sha256: sbomSha256 });
  }

  async findComponents(projectId: string, by: ComponentQuery, limit: number): Promise<StoredSbomComponent[]> {
    // Anchored prefixes, which an index answers: a purl with any version, a CPE with any further fields.
    const filter =
      'name' in by
        ? { project_id: projectId, name_key: by.name.toLowerCase() }
        : 'purl' in by
          ? { project_id: projectId, purl: { $regex: `^${escapeRegex(by.purl)}(@|$)` } }
          : { project_id: projectId, cpes: { $regex: `^${escapeRegex(by.cpe)}(:|$)` } };
    const docs = await this.models.SbomComponent.find(filter).limit(limit).lean<SbomComponentDoc[]>();
    return docs.map((doc) => ({
      artifactId: doc.artifact_id,
      sbomSha256: doc.sbom_sha256,
      name: doc.name,
      version: doc.version,
      purl: doc.purl,
      cpes: doc.cpes,
      supplier: doc.supplier,
      hashes: doc.hashes,
    }));
  }
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
