import { EspImageReader, MANIFEST_SCHEMA } from '@ota/manifest';
import type { artifacts, registry } from '@ota/proto';
import type { Context } from 'koa';
import type { GatewayDeps } from '../deps';
import { answerOncePerKey, fingerprintOfUpload, hashingStream, IDEMPOTENCY_PARAMETER, uploadFingerprint, type StoredAnswer } from '../http/idempotency';
import { receiveUpload } from '../http/multipart';
import type { OperationTable } from '../http/operations';
import { artifactJson, downloadsJson, patchJson, signingKeyJson } from '../http/present';
import * as R from '../http/response-schemas';
import { createSigningKeyBody, requestPatchBody, updateArtifactBody } from '../http/schemas';
import { setArtifactArchived } from '../use-cases/artifact-archiving';
import { holdsJson } from '../use-cases/build-holds';
import { resolveReleaseTarget, startRelease } from '../use-cases/release';
import type { ReleasedImage } from '../use-cases/secure-version-raise';
import { callerOf, idempotencyOptions, pathId, rpc, useCasePorts } from './context';

const UPLOAD_FORM = {
  required: ['manifest', 'binary'],
  properties: {
    // The Manifest component, sent as a JSON part (`encoding` below); it must come before `binary`.
    manifest: MANIFEST_SCHEMA,
    // format: binary is what generators read to send a file part; contentMediaType is OpenAPI 3.1's word for it.
    binary: { type: 'string', format: 'binary', contentMediaType: 'application/octet-stream', description: 'The application image, streamed to object storage.' },
  },
  encoding: { manifest: { contentType: 'application/json' } },
};

export function artifactRoutes(table: OperationTable, deps: GatewayDeps): void {
  const artifacts = table.section({ tag: 'Artifacts', access: 'developer' });
  const signingKeys = table.section({ tag: 'Signing keys', access: 'developer' });
  const { clients, store, audit } = deps;
  const ports = useCasePorts(deps);

  /**
   * Streams the multipart binary to the artifacts service. `checkRest` sees every other form
   * field once the body has been read; if it throws, the upload is cancelled before it commits,
   * so nothing is stored and no build number is taken. The answer carries the request's
   * fingerprint (for an Idempotency-Key), from the binary's SHA-256 taken on the way through.
   */
  async function upload<T>(ctx: Context, project: registry.Project, checkRest: (fields: Map<string, string>, image: ReleasedImage, checksumSha256: string) => Promise<T>, readsImage = false) {
    const owner = await store.findUser(project.ownerId);
    const maxUploadsPerMonth = owner?.plan.maxUploadsPerMonth ?? 0;
    let rest: T | undefined;
    let fingerprint = '';
    const response = await receiveUpload(ctx, deps.config.MANIFEST_LIMIT_BYTES, ({ manifest, binary, complete }) => {
      const hashed = hashingStream(binary);
      // What a release's form is checked against (its raise of secure_version). The artifacts
      // service reads the image again and refuses a bad one: here a bad one is none.
      const image = readsImage ? new ImageOnTheWay() : undefined;
      const messages = async function* () {
        const header = { projectId: project.id, ownerId: project.ownerId, manifestJson: manifest, maxUploadsPerMonth, endsWithEmptyChunk: true, requireEspImage: project.requireEspImage };
        yield { part: { $case: 'header' as const, header } };
        for await (const chunk of hashed.stream) {
          if (chunk.length === 0) continue;
          image?.update(chunk);
          yield { part: { $case: 'chunk' as const, chunk } };
        }
        const fields = await complete;
        fingerprint = uploadFingerprint(manifest, hashed.digest(), fields);
        rest = await checkRest(fields, image?.finish() ?? null, hashed.digest());
        // The rest of the form is accepted: the upload may be stored.
        yield { part: { $case: 'chunk' as const, chunk: Buffer.alloc(0) } };
      };
      return clients.artifacts.uploadArtifact(messages(), rpc(ctx));
    });
    return { artifact: response.artifact! as artifacts.Artifact, rest: rest as T, fingerprint };
  }

  const projectBuilds = async (ctx: Context, projectId: string) => (await clients.artifacts.listArtifacts({ projectId }, rpc(ctx))).artifacts;

  /** Once per Idempotency-Key (docs/api.md, "Retrying an upload"): a repeat is read for its fingerprint and stores nothing. */
  const onceByKey = (ctx: Context, project: registry.Project, operation: string, run: () => Promise<StoredAnswer>) =>
    answerOncePerKey(ctx, `${project.id}:${operation}`, idempotencyOptions(deps), run, () => fingerprintOfUpload(ctx, deps.config.MANIFEST_LIMIT_BYTES));

  artifacts.add(
    {
      route: 'GET /projects/:id/artifacts/',
      operationId: 'listArtifacts',
      summary: 'List artifacts',
      description: 'Newest build first. Artifacts are never deleted.',
      project: 'viewer',
      responses: { 200: R.arrayOf(R.Artifact) },
    },
    async (ctx, { project }) => {
      const { artifacts: builds } = await clients.artifacts.listArtifacts({ projectId: project.id }, rpc(ctx));
      ctx.body = builds.map((artifact) => artifactJson(artifact, builds));
    },
  );

  artifacts.add(
    {
      route: 'POST /projects/:id/artifacts/',
      operationId: 'uploadArtifact',
      summary: 'Upload an artifact',
      description:
        "multipart/form-data with `manifest` first, then `binary`. The binary is streamed to object storage and its SHA-256 computed on the way. 400 for a manifest that is not JSON or fails the schema, a signature that does not verify, or the plan's monthly upload limit.",
      project: 'operator',
      multipart: UPLOAD_FORM,
      headers: [IDEMPOTENCY_PARAMETER],
      responses: { 201: R.Artifact },
      errors: [409, 422],
    },
    async (ctx, { project, principal }) => {
      await onceByKey(ctx, project, 'uploadArtifact', async () => {
        const { artifact, fingerprint } = await upload(ctx, project, async () => undefined);
        const body = artifactJson(artifact, await projectBuilds(ctx, project.id));
        await audit.record(principal, {
          projectId: project.id,
          action: 'artifact.uploaded',
          targetType: 'artifact',
          targetId: artifact.id,
          details: { build_number: artifact.buildNumber, version_label: artifact.versionLabel, image: body.image, secure_version_raise: body.secure_version_raise },
        });
        return { fingerprint, status: 201, body };
      });
    },
  );

  artifacts.add(
    {
      route: 'PATCH /projects/:id/artifacts/:aid/',
      operationId: 'updateArtifact',
      summary: 'Archive or unarchive an artifact',
      description: 'Archived builds are never offered and cannot be deployed. Archiving is refused (400) while a draft, active or paused deployment uses the build.',
      project: 'operator',
      body: updateArtifactBody,
      responses: { 200: R.Artifact },
    },
    async (ctx, { project, body }) => {
      const artifactId = pathId(ctx, 'aid', 'artifact');
      const artifact = await setArtifactArchived(ports, callerOf(ctx), { projectId: project.id, artifactId, archived: body.archived });
      ctx.body = artifactJson(artifact, await projectBuilds(ctx, project.id));
    },
  );

  artifacts.add(
    {
      route: 'GET /projects/:id/artifacts/:aid/holds/',
      operationId: 'listBuildHolds',
      summary: 'What holds a build back',
      description:
        'The deployments of this build that a guardrail paused or whose approval gate is still ahead (docs/api.md, "Holds on a build"): while any is listed, starting, resuming or ramping up another deployment of it needs an approver and `override_holds`. An id that names no build of the project is 404.',
      project: 'viewer',
      responses: { 200: R.arrayOf(R.BuildHold) },
    },
    async (ctx, { project }) => {
      const artifactId = pathId(ctx, 'aid', 'artifact');
      // Another project's build is no build here (404), whatever rollout would answer of it.
      await clients.artifacts.getArtifact({ projectId: project.id, artifactId }, rpc(ctx));
      const { holds } = await clients.rollout.listBuildHolds({ projectId: project.id, artifactId, exceptDeploymentId: '' }, rpc(ctx));
      ctx.body = holdsJson(holds);
    },
  );

  artifacts.add(
    {
      route: 'GET /projects/:id/artifacts/:aid/downloads/',
      operationId: 'countBuildDownloads',
      summary: "How a build reached devices: patches, whole images, bytes saved",
      description: "How the devices' images came, from the `detail` of each device's first `downloaded` report (docs/api.md, \"Delta patches\"): as a delta patch, whole, or whole after a patch was given up; and the bytes the patches saved. Summed over every deployment of the build. An id that names no build of the project is 404.",
      project: 'viewer',
      responses: { 200: R.Downloads },
    },
    async (ctx, { project }) => {
      const artifactId = pathId(ctx, 'aid', 'artifact');
      const { artifact } = await clients.artifacts.getArtifact({ projectId: project.id, artifactId }, rpc(ctx));
      const counts = await clients.rollout.countDownloads({ projectId: project.id, artifactId, deploymentId: '' }, rpc(ctx));
      ctx.body = downloadsJson(counts, Number(artifact!.fileSize));
    },
  );

  artifacts.add(
    {
      route: 'GET /projects/:id/artifacts/:aid/patches/',
      operationId: 'listPatches',
      summary: "A build's delta patches",
      description: 'The patches to this build, oldest first, each with its state: `queued`, `building`, `ready` (made, and applied back to the target\'s bytes by an independent implementation) or `failed` with its `reason`.',
      project: 'viewer',
      responses: { 200: R.arrayOf(R.Patch) },
    },
    async (ctx, { project }) => {
      const artifactId = pathId(ctx, 'aid', 'artifact');
      const { patches } = await clients.artifacts.listPatches({ projectId: project.id, targetArtifactId: artifactId }, rpc(ctx));
      ctx.body = patches.map(patchJson);
    },
  );

  artifacts.add(
    {
      route: 'POST /projects/:id/artifacts/:aid/patches/',
      operationId: 'requestPatch',
      summary: 'Ask for a delta patch to this build',
      description:
        'Queues the patch from the build `base_artifact_id` to this one, made by the artifacts service\'s patch workers, never on a request\'s path; asking again answers the same patch. Answers 202 with the patch in its state; `GET` the list to follow it.',
      project: 'operator',
      body: requestPatchBody,
      responses: { 202: R.Patch },
    },
    async (ctx, { project, principal, body }) => {
      const artifactId = pathId(ctx, 'aid', 'artifact');
      const { patch } = await clients.artifacts.requestPatch({ projectId: project.id, targetArtifactId: artifactId, baseArtifactId: body.base_artifact_id }, rpc(ctx));
      await audit.record(principal, { projectId: project.id, action: 'artifact.patch_requested', targetType: 'artifact', targetId: artifactId, details: { base_artifact_id: body.base_artifact_id, state: patch!.state } });
      ctx.status = 202;
      ctx.body = patchJson(patch!);
    },
  );

  artifacts.add(
    {
      route: 'POST /projects/:id/release/',
      operationId: 'release',
      summary: 'Upload, create a deployment and start it',
      description:
        'One call for the common case: the build goes to the channel named `channel_name` (default `stable`, must exist) at `rollout_percentage` (default 100). A refused channel or percentage stores nothing, and neither does a release of the bytes of a build that is held (403 below the approver role, 400 without `override_holds=true`). Canaries by group, or an approval step, need the three calls: upload, create deployment, transition.',
      project: 'operator',
      roleNote: 'A build that raises secure_version (`acknowledge_secure_version_raise`) needs the approver role.',
      multipart: {
        required: UPLOAD_FORM.required,
        properties: {
          ...UPLOAD_FORM.properties,
          channel_name: { type: 'string', default: 'stable' },
          rollout_percentage: { type: 'string', pattern: '^\\d{1,3}$', default: '100', description: 'An integer from 0 to 100.' },
          acknowledge_secure_version_raise: {
            type: 'string',
            enum: ['true', 'false'],
            default: 'false',
            description: 'Required `true` (and the approver role) when the build raises secure_version: devices that confirm it burn eFuse bits for good.',
          },
          override_holds: {
            type: 'string',
            enum: ['true', 'false'],
            default: 'false',
            description: 'Required `true` (and the approver role) when a build of the same bytes is held (docs/api.md, "Holds on a build").',
          },
        },
      },
      headers: [IDEMPOTENCY_PARAMETER],
      responses: { 201: R.Release },
      errors: [409, 422],
    },
    async (ctx, { project, role }) => {
      await onceByKey(ctx, project, 'release', async () => {
        const caller = { ...callerOf(ctx), role };
        const { artifact, rest: target, fingerprint } = await upload(ctx, project, (fields, image, checksum) => resolveReleaseTarget(ports, caller, project.id, fields, { image, checksumSha256: checksum }), true);
        const deployment = await startRelease(ports, caller, artifact, target);
        const body = { artifact_id: artifact.id, build_number: artifact.buildNumber, deployment_id: deployment.id, state: deployment.state, channel: target.channel.name };
        return { fingerprint, status: 201, body };
      });
    },
  );

  signingKeys.add(
    { route: 'GET /projects/:id/signing-keys/', operationId: 'listSigningKeys', summary: 'List signing keys', project: 'viewer', responses: { 200: R.arrayOf(R.SigningKey) } },
    async (ctx, { project }) => {
      ctx.body = (await clients.artifacts.listSigningKeys({ projectId: project.id }, rpc(ctx))).keys.map(signingKeyJson);
    },
  );

  signingKeys.add(
    {
      route: 'POST /projects/:id/signing-keys/',
      operationId: 'createSigningKey',
      summary: 'Add a signing key',
      description: 'An Ed25519 public key, PEM (SPKI) or base64 of its 32 raw bytes; one that does not parse is 400, one the project already has is 409. A manifest `signature` must verify against one of these keys.',
      project: 'admin',
      body: createSigningKeyBody,
      responses: { 201: R.SigningKey },
      errors: [409],
    },
    async (ctx, { project, principal, body }) => {
      const { key } = await clients.artifacts.createSigningKey({ projectId: project.id, name: body.name, publicKey: body.public_key }, rpc(ctx));
      await audit.record(principal, { projectId: project.id, action: 'signing_key.created', targetType: 'signing_key', targetId: key!.id, details: { fingerprint: key!.fingerprint } });
      ctx.status = 201;
      ctx.body = signingKeyJson(key!);
    },
  );

  signingKeys.add(
    { route: 'DELETE /projects/:id/signing-keys/:key_id/', operationId: 'deleteSigningKey', summary: 'Delete a signing key', project: 'admin', responses: { 204: null } },
    async (ctx, { project, principal }) => {
      const keyId = pathId(ctx, 'key_id', 'signing key');
      await clients.artifacts.deleteSigningKey({ projectId: project.id, keyId }, rpc(ctx));
      await audit.record(principal, { projectId: project.id, action: 'signing_key.deleted', targetType: 'signing_key', targetId: keyId });
      ctx.status = 204;
    },
  );
}

/**
 * Reads an ESP-IDF image as the gateway streams it on, for what a form decides before the upload
 * commits. The artifacts service is the judge of a bad image: this one answers null for it.
 */
class ImageOnTheWay {
  private readonly reader = new EspImageReader();
  private broken = false;

  update(chunk: Buffer): void {
    if (this.broken) return;
    try {
      this.reader.update(chunk);
    } catch {
      this.broken = true;
    }
  }

  finish(): ReleasedImage {
    if (this.broken) return null;
    try {
      return this.reader.finish();
    } catch {
      return null;
    }
  }
}
