import type { GatewayDeps } from '../deps';
import type { OperationTable } from '../http/operations';
import { artifactJson } from '../http/present';
import { readBody } from '../http/raw-body';
import * as R from '../http/response-schemas';
import { pathId, rpc } from './context';

/** The media type a stored SBOM is answered with, by the format it was read as. */
const MEDIA_TYPES: Record<string, string> = {
  'spdx-2.2-tag-value': 'text/spdx; charset=utf-8',
  'spdx-2.3-tag-value': 'text/spdx; charset=utf-8',
  'spdx-2.2-json': 'application/spdx+json',
  'spdx-2.3-json': 'application/spdx+json',
  'spdx-3.0.1-json-ld': 'application/ld+json',
  'cyclonedx-1.5-json': 'application/vnd.cyclonedx+json',
  'cyclonedx-1.6-json': 'application/vnd.cyclonedx+json',
};

/** A build's SBOM (docs/api.md, "SBOMs"): given once, read and indexed by the artifacts service, answered as sent. */
export function sbomRoutes(table: OperationTable, deps: GatewayDeps): void {
  const sboms = table.section({ tag: 'Artifacts', access: 'developer' });
  const { clients, audit } = deps;

  sboms.add(
    {
      route: 'PUT /projects/:id/artifacts/:aid/sbom/',
      operationId: 'uploadArtifactSbom',
      summary: "Give a build its SBOM",
      description:
        'The raw body is the document: SPDX 2.2 or 2.3 (tag-value or JSON), SPDX 3.0.1 JSON-LD, or CycloneDX 1.5 or 1.6 JSON, recognised from its content (what esp-idf-sbom writes, in any of its formats), at most SBOM_MAX_BYTES. Its components (name, version, purl, CPEs, supplier, hashes) are read and indexed. Anything else, or a document past the bounds docs/api.md gives, is 400 with nothing stored. A build\'s SBOM is never replaced (409); sending the same document again changes nothing (200).',
      project: 'operator',
      rawBody: { description: 'The SBOM document.' },
      responses: { 200: R.Artifact },
      errors: [404, 409, 413],
    },
    async (ctx, { project, principal }) => {
      const artifactId = pathId(ctx, 'aid', 'artifact');
      const document = await readBody(ctx, deps.config.SBOM_MAX_BYTES, 'an SBOM', 'SBOM_MAX_BYTES');
      const answer = await clients.artifacts.putArtifactSbom({ projectId: project.id, artifactId, document }, rpc(ctx));
      const artifact = answer.artifact!;
      if (answer.changed) {
        const sbom = artifact.sbom!;
        await audit.record(principal, {
          projectId: project.id,
          action: 'artifact.sbom_uploaded',
          targetType: 'artifact',
          targetId: artifact.id,
          details: { build_number: artifact.buildNumber, sbom_sha256: sbom.sha256, format: sbom.format, components: Number(sbom.components) },
        });
      }
      const builds = (await clients.artifacts.listArtifacts({ projectId: project.id }, rpc(ctx))).artifacts;
      ctx.body = artifactJson(artifact, builds);
    },
  );

  sboms.add(
    {
      route: 'GET /projects/:id/artifacts/:aid/sbom/',
      operationId: 'getArtifactSbom',
      summary: "A build's SBOM, as it was sent",
      description: 'The document byte for byte, with the media type of its format and its SHA-256 as a strong `ETag`. A build without one is 404.',
      project: 'viewer',
      rawResponse: { mediaTypes: [...new Set(Object.values(MEDIA_TYPES))], description: 'The SBOM as it was sent.' },
      responses: { 200: { type: 'string' } },
      errors: [404],
    },
    async (ctx, { project }) => {
      const artifactId = pathId(ctx, 'aid', 'artifact');
      const { sbom, document } = await clients.artifacts.getArtifactSbom({ projectId: project.id, artifactId }, rpc(ctx));
      ctx.set('ETag', `"${sbom!.sha256}"`);
      ctx.type = MEDIA_TYPES[sbom!.format] ?? 'application/octet-stream';
      ctx.body = Buffer.from(document);
    },
  );
}
