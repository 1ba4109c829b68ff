import { invalidArgument, notFound, permissionDenied, unavailable } from '@ota/errors';
import type { Context } from 'koa';
import type { artifacts, rollout } from '@ota/proto';
import type { Logger } from '@ota/logging';
import { Readable } from 'node:stream';
import type { Principal } from '../auth/principal';
import type { GatewayDeps } from '../deps';
import { answerRange, etagOf } from '../http/byte-range';
import { HttpError } from '../http/errors';
import type { DownloadToSign, OfferBinding } from '../http/download-url';
import { httpMetrics, type HttpMetrics } from '../http/http-metrics';
import { jitteredSeconds } from '../http/load-shedding';
import type { OperationTable } from '../http/operations';
import * as R from '../http/response-schemas';
import { checkBody, offerStandingBody, statusBody, type CheckBody, type OfferStandingBody, type StatusBody } from '../http/schemas';
import { DEFERRED_EVENT, MAX_DEFERRAL_SECONDS, STOP_STATUSES, STOPPED_EVENT } from '@ota/vocabulary';
import { UUID_PATTERN } from '../http/validate';
import { checkDevice, type DeviceCheckPorts } from '../use-cases/device-check';
import { patchOfferOf } from '../use-cases/patch-offer';
import { deviceIdOf, rpc } from './context';
import { reportDeviceStatus } from '../use-cases/device-report';

/** The signed download URL's query, as the offer's `url` carries it; all of it is signed (http/download-url.ts). */
const SIGNED_URL_PARAMETERS = [
  { name: 'size', required: true, schema: { type: 'integer', minimum: 0 }, description: "The build's size in bytes." },
  { name: 'sha256', required: false, schema: { type: 'string', pattern: '^[0-9a-f]{64}$' }, description: "The build's SHA-256 (absent from URLs of the release before ranges)." },
  { name: 'deployment', required: false, schema: { type: 'string', format: 'uuid' }, description: 'The deployment of the offer the URL was made for (absent from URLs of the release before the emergency stop).' },
  { name: 'device', required: false, schema: { type: 'string' }, description: 'The device_id of that offer.' },
  { name: 'token', required: false, schema: { type: 'string', format: 'uuid' }, description: 'The id of the token its check came with.' },
  { name: 'patch', required: false, schema: { type: 'string', pattern: '^[0-9a-f]{64}$' }, description: "In an offer's `patch.url`: the SHA-256 of the image the patch applies to; `size` and `sha256` are then the patch's." },
  { name: 'expires', required: true, schema: { type: 'integer', minimum: 0 }, description: 'Unix seconds after which the URL is refused.' },
  { name: 'signature', required: true, schema: { type: 'string', pattern: '^[0-9a-f]{64}$' }, description: 'HMAC-SHA256 of the other three and the artifact id.' },
];
const ACCEPT_RANGES = { description: '`bytes`: the download answers ranges.', schema: { type: 'string', enum: ['bytes'] } };
const BUILD_ETAG = { description: "The build's SHA-256 in quotes: the same under every URL of the same build.", schema: { type: 'string' } };
/** Devices told to wait for a maintenance window come back spread over this many seconds after it opens. */
const WINDOW_ARRIVAL_SPREAD_SECONDS = 60;
/** A device waiting for its delta patch checks again at least this often (docs/api.md, "Delta patches"). */
const PATCH_WAIT_POLL_SECONDS = 10;

/** The device API (docs/api.md, "The device API"): business outcomes are 200 with a status, never errors. */
export function deviceApiRoutes(table: OperationTable, deps: GatewayDeps): void {
  const deviceApi = table.section({ tag: 'Device API', access: 'device' });
  const downloads = table.section({ tag: 'Device API', access: 'public' });
  const { clients } = deps;

  /** When the device should check next: the configured interval, jittered so that a fleet spreads out. */
  const pollAfter = (): { poll_after_seconds?: number } =>
    deps.config.CHECK_POLL_INTERVAL_SECONDS > 0 ? { poll_after_seconds: jitteredSeconds(deps.config.CHECK_POLL_INTERVAL_SECONDS) } : {};

  /**
   * A build waiting for a time (its maintenance window, or the end of the device's deferral): the
   * device checks again no later than a minute after it (spread over that minute, so that a fleet
   * does not arrive at one instant).
   */
  const pollUntil = (at: Date): { poll_after_seconds: number } => {
    const untilThen = Math.max(0, Math.ceil((at.getTime() - Date.now()) / 1000)) + Math.floor(Math.random() * WINDOW_ARRIVAL_SPREAD_SECONDS) + 1;
    const usual = pollAfter().poll_after_seconds;
    return { poll_after_seconds: usual === undefined ? untilThen : Math.min(usual, untilThen) };
  };
  const waiting = (outcome: { windowOpensAt?: Date; deferredUntil?: Date; checkAgainAt?: Date }) => {
    if (outcome.windowOpensAt) return { ...pollUntil(outcome.windowOpensAt), window_opens_at: outcome.windowOpensAt.toISOString() };
    if (outcome.deferredUntil) return { ...pollUntil(outcome.deferredUntil), deferred_until: outcome.deferredUntil.toISOString() };
    // Held by the deployment's offer caps: back once the next minute has begun.
    if (outcome.checkAgainAt) return pollUntil(outcome.checkAgainAt);
    return pollAfter();
  };

  deviceApi.add(
    {
      route: 'POST /ota/check/',
      operationId: 'checkForUpdate',
      summary: 'Device check',
      description:
        'Records a heartbeat, registers an unknown device (project token), and answers whether a compatible build is offered. Routine outcomes are 200 with `status`; real errors are 400 (malformed body, or a declared board_id/hardware_revision missing), 401 and 403.',
      body: checkBody,
      responses: { 200: R.CheckResponse },
    },
    checkHandler,
  );
  // Made at the first check, not here: the routes are also declared without dependencies, to
  // describe the API (describeApi).
  let checkMetrics: HttpMetrics | undefined;
  async function checkHandler(ctx: Context, { principal, body }: { principal: Principal; body: CheckBody }) {
    const deviceId = deviceIdOf(principal, body.device_id);
    const outcome = await checkDevice(checkPorts(), {
      projectId: principal.token.projectId,
      ownerId: principal.userId,
      deviceId,
      viaProjectToken: principal.token.kind === 'project',
      body,
      call: rpc(ctx),
    });
    checkMetrics ??= httpMetrics(deps.metrics);
    if (!outcome.offer) {
      checkMetrics.deviceChecks.inc({ status: outcome.status });
      ctx.body = { update_available: false, status: outcome.status, message: outcome.message, ...waiting(outcome) };
      return;
    }
    const { offer } = outcome;
    const binding = { deploymentId: offer.deploymentId, deviceId, tokenId: principal.token.id };
    const delivery = await patchOfferOf(
      { artifacts: clients.artifacts, patchOfferWaitSeconds: deps.config.PATCH_OFFER_WAIT_SECONDS, now: () => new Date() },
      { projectId: principal.token.projectId, build: offer, currentHash: body.current_hash, deltaFormats: body.delta_formats },
      rpc(ctx),
    );
    if (delivery.kind === 'wait') {
      // The offer stands (its deployment recorded it); the device comes back for its patch.
      checkMetrics.deviceChecks.inc({ status: 'patch_wait' });
      ctx.body = { update_available: false, status: 'not_in_rollout', message: `a delta patch to build ${offer.buildNumber} from the image the device runs is being made`, ...pollForPatch(delivery.until), patch_wait_until: delivery.until.toISOString() };
      return;
    }
    checkMetrics.deviceChecks.inc({ status: outcome.status });
    const patch = delivery.kind === 'patch' ? await patchFieldsOf(ctx, offer, delivery.patch, delivery.baseSha256, binding) : undefined;
    if (patch) {
      checkMetrics.offeredBytes.inc({ kind: 'patch' }, patch.size);
      checkMetrics.offeredBytes.inc({ kind: 'patched_image' }, offer.fileSize);
    } else {
      checkMetrics.offeredBytes.inc({ kind: 'image' }, offer.fileSize);
    }
    ctx.body = {
      status: 'offered',
      update_available: true,
      build_number: offer.buildNumber,
      version: offer.versionLabel,
      url: await downloadUrlOf(ctx, offer, binding),
      checksum: offer.checksumSha256,
      size: offer.fileSize,
      deployment_id: offer.deploymentId,
      security_mode: offer.securityMode,
      ...(offer.signature ? { signature: offer.signature, signing_key_id: offer.signingKeyId } : {}),
      ...(patch ? { patch } : {}),
      ...pollAfter(),
    };
  }

  /** A device waiting for its patch checks again within PATCH_WAIT_POLL_SECONDS, and by the end of the wait. */
  function pollForPatch(until: Date): { poll_after_seconds: number } {
    const untilThen = Math.max(1, Math.ceil((until.getTime() - Date.now()) / 1000));
    return { poll_after_seconds: Math.min(untilThen, PATCH_WAIT_POLL_SECONDS) + Math.floor(Math.random() * 3) };
  }

  /** The offer's `patch` (docs/api.md, "Delta patches"): signed as the build's URL is, and binding the base too. */
  async function patchFieldsOf(ctx: Context, offer: rollout.Offer, patch: artifacts.Patch, base: string, binding: OfferBinding) {
    const url = await signedUrlOf(ctx, { artifactId: offer.artifactId, size: Number(patch.size), sha256: patch.sha256, offer: binding, patchBase: base });
    return { url, size: Number(patch.size), sha256: patch.sha256, base_sha256: base, format: patch.format };
  }

  /**
   * Where the device fetches the offered build: object storage itself with DOWNLOAD_URLS=presigned
   * (an artifacts service from before storage keys sends none, and a presigned URL may be too long
   * for a device: then, and by default, our own signed endpoint below).
   */
  async function downloadUrlOf(ctx: Context, offer: { artifactId: string; fileSize: number; checksumSha256: string; storageKey: string }, binding: OfferBinding): Promise<string> {
    const presigned = deps.presignedDownloads && offer.storageKey ? await deps.presignedDownloads.urlOf(offer.storageKey) : undefined;
    if (presigned) return presigned;
    return signedUrlOf(ctx, { artifactId: offer.artifactId, size: offer.fileSize, sha256: offer.checksumSha256, offer: binding });
  }

  /** A URL of our own signed download endpoint, for a build or a patch. */
  async function signedUrlOf(ctx: Context, download: DownloadToSign): Promise<string> {
    // Without PUBLIC_BASE_URL the URL is the request's own origin; a request that names none
    // (HTTP/1.0 without Host) cannot be given a URL that works.
    if (!deps.config.PUBLIC_BASE_URL && !ctx.host) throw invalidArgument('the request names no Host, so no download URL can be made for it; send Host, or set PUBLIC_BASE_URL');
    const baseUrl = deps.config.PUBLIC_BASE_URL || `${ctx.protocol}://${ctx.host}`;
    return deps.signer.sign(baseUrl, download);
  }

  /** The check's ports: registry's client and the plan cache. */
  function checkPorts(): DeviceCheckPorts {
    return { registry: clients.registry, maxDevicesOf: async (ownerId) => (await deps.plans.planOf(ownerId)).maxDevices };
  }

  deviceApi.add(
    {
      route: 'POST /ota/status/',
      operationId: 'reportStatus',
      summary: 'Device lifecycle event',
      description:
        'Events: offered, download_started, downloaded, flashed, validated, reboot, confirmed, failed, rolled_back, and the legacy rebooted; and `stopped`, with a stop status as `reason`, when the device stopped an update whose offer no longer stands (it moves no status and counts as no failure); and `deferred` with `deferred_until`, when the device puts the offer off: the deployment offers it nothing before then, and the deferral moves no status and counts as no failure. `accepted: true` comes only once the event is stored; repeating confirmed, rolled_back or a stop is a no-op. A deployment that does not exist in the project is 404.',
      body: statusBody,
      responses: { 200: R.StatusResponse },
    },
    statusHandler,
  );
  async function statusHandler(ctx: Context, { principal, body }: { principal: Principal; body: StatusBody }) {
    const deviceId = deviceIdOf(principal, body.device_id);
    if (body.event === 'confirmed' && body.build_number === undefined) throw invalidArgument('build_number is required with confirmed');
    if (body.event === STOPPED_EVENT && !(STOP_STATUSES as readonly string[]).includes(body.reason ?? '')) {
      throw invalidArgument(`a stopped report's reason is one of ${STOP_STATUSES.join(', ')}`);
    }
    requireDeferral(body);
    ctx.body = await reportDeviceStatus(clients, {
      projectId: principal.token.projectId,
      deviceId,
      viaProjectToken: principal.token.kind === 'project',
      body,
      call: rpc(ctx),
    });
  }

  /** `deferred_until` comes with `deferred` and only with it, later than now and at most 30 days ahead (docs/api.md, "Deferral"). */
  function requireDeferral(body: StatusBody): void {
    if (body.event !== DEFERRED_EVENT) {
      if (body.deferred_until !== undefined) throw invalidArgument('deferred_until goes only with the deferred event');
      return;
    }
    if (body.deferred_until === undefined) throw invalidArgument('deferred_until is required with deferred');
    const seconds = (Date.parse(body.deferred_until) - Date.now()) / 1000;
    if (!(seconds > 0)) throw invalidArgument('deferred_until must be later than now');
    if (seconds > MAX_DEFERRAL_SECONDS) throw invalidArgument(`deferred_until must be at most ${MAX_DEFERRAL_SECONDS / 86_400} days ahead`);
  }

  deviceApi.add(
    {
      route: 'POST /ota/offer/',
      operationId: 'offerStanding',
      summary: 'Whether an offer still stands',
      description:
        'Asked by a device mid-update, between chunks and before it switches its boot slot: `standing: true` while the deployment still offers the build to the device; otherwise the stop `status` and `hold` (keep the bytes and check again, as after a pause; or abandon the download). Records nothing. A deployment that does not exist in the project is 404.',
      body: offerStandingBody,
      responses: { 200: R.OfferStandingAnswer },
    },
    async (ctx: Context, { principal, body }: { principal: Principal; body: OfferStandingBody }) => {
      const answer = await clients.registry.offerStanding(
        { projectId: principal.token.projectId, deviceId: deviceIdOf(principal, body.device_id), viaProjectToken: principal.token.kind === 'project', deploymentId: body.deployment_id },
        rpc(ctx),
      );
      ctx.body = answer.standing ? { standing: true } : { standing: false, status: answer.status, hold: answer.hold, message: answer.message };
    },
  );

  /**
   * A download URL works only while the offer it was made for stands (docs/api.md, "Stopping
   * devices mid-update"): the token that asked for it is live, and the deployment still offers the
   * build to the device. A held offer (a pause) is 409, a withdrawn one 410; either `detail` says why.
   */
  async function requireOfferStanding(ctx: Context, binding: OfferBinding): Promise<void> {
    const token = await deps.store.findToken(binding.tokenId);
    if (!token || token.revokedAt) throw permissionDenied('the token this download was offered to is revoked');
    const answer = await clients.registry.offerStanding(
      { projectId: token.projectId, deviceId: binding.deviceId, viaProjectToken: token.kind === 'project', deploymentId: binding.deploymentId },
      rpc(ctx),
    );
    if (!answer.standing) throw new HttpError(answer.hold ? 409 : 410, `the offer no longer stands (${answer.status}): ${answer.message}`);
  }

  // Signed download URLs. No bearer token: the signature is the credential. The binary streams
  // from object storage through the artifacts service, one chunk at a time; a range is read from
  // object storage as a range (docs/api.md, "Resuming a download").
  downloads.add(
    {
      route: 'GET /ota/download/:artifactId',
      operationId: 'downloadArtifact',
      summary: 'Download an offered build',
      description:
        'The `url` of an offer. No bearer token: the HMAC signature is the credential. An altered or expired URL is 403, and so is one whose check\'s token was revoked since. ' +
        'It works only while its offer stands: once the deployment is paused it is 409, once it no longer offers the build to the device (cancelled, completed, the build archived, the device deactivated or deleted or moved out of its target) 410; `detail` says why. ' +
        'Answers `Accept-Ranges: bytes` and a strong `ETag` (the build\'s SHA-256, quoted). `Range: bytes=N-`, `bytes=N-M` or `bytes=-N` gets 206 with `Content-Range`; ' +
        'a range that starts past the end gets 416 with `Content-Range: bytes */size`. With `If-Range` naming another tag, the whole build is sent (200). ' +
        'A device whose URL expired checks again and resumes from its offset with the new URL: the same build has the same `ETag`. ' +
        '`HEAD` answers the same status and headers, reading nothing of the build.',
      responses: { 200: { type: 'string', format: 'binary' }, 206: { type: 'string', format: 'binary' } },
      // 400: query text no store could hold (a NUL character), refused before the handler like any malformed device API input.
      // 409: the offer is held (a paused deployment); 410: it was withdrawn (docs/api.md, "Stopping devices mid-update").
      errors: [400, 409, 410, 416],
      documentedQuery: SIGNED_URL_PARAMETERS,
      responseHeaders: {
        200: { 'Accept-Ranges': ACCEPT_RANGES, ETag: BUILD_ETAG, 'Content-Length': { description: 'The build\'s size.', schema: { type: 'integer' } } },
        206: { 'Accept-Ranges': ACCEPT_RANGES, ETag: BUILD_ETAG, 'Content-Range': { description: '`bytes N-M/size`.', schema: { type: 'string' } }, 'Content-Length': { description: 'The range\'s length.', schema: { type: 'integer' } } },
        416: { 'Content-Range': { description: '`bytes */size`: the build\'s size.', schema: { type: 'string' } } },
      },
    },
    async (ctx) => {
      const artifactId = ctx.params.artifactId as string;
      if (!UUID_PATTERN.test(artifactId)) throw notFound('artifact not found');
      const query = ctx.query as Record<string, string | undefined>;
      const signed = {
        artifactId,
        size: query.size ?? '',
        sha256: query.sha256,
        deployment: query.deployment,
        device: query.device,
        token: query.token,
        patch: query.patch,
        expires: query.expires ?? '',
        signature: query.signature ?? '',
      };
      const verdict = deps.signer.verify(signed);
      if (verdict === 'expired') throw permissionDenied('this download URL has expired; check again for a new one');
      if (verdict !== 'ok') throw permissionDenied('this download URL is not valid');
      if (signed.deployment !== undefined) await requireOfferStanding(ctx, { deploymentId: signed.deployment, deviceId: signed.device!, tokenId: signed.token! });

      const size = Number(signed.size);
      const etag = signed.sha256 === undefined ? undefined : etagOf(signed.sha256);
      const range = answerRange(ctx.get('range') || undefined, ctx.get('if-range') || undefined, size, etag);
      if (range.kind === 'unsatisfiable') {
        throw new HttpError(416, `the range is outside the ${size}-byte build`, { 'Content-Range': `bytes */${size}`, 'Accept-Ranges': 'bytes' });
      }
      const start = range.kind === 'partial' ? range.start : 0;
      const length = range.kind === 'partial' ? range.end - range.start + 1 : size;
      const answerHead = () => {
        ctx.status = range.kind === 'partial' ? 206 : 200;
        ctx.type = 'application/octet-stream';
        ctx.set('Accept-Ranges', 'bytes');
        if (etag) ctx.set('ETag', etag);
        if (range.kind === 'partial') ctx.set('Content-Range', `bytes ${range.start}-${range.end}/${size}`);
        ctx.length = length;
      };
      if (ctx.method === 'HEAD') {
        // The signed URL says all a head needs: no byte of the build is read for it.
        answerHead();
        return;
      }

      const chunks = clients.artifacts.readArtifactBinary(
        { artifactId, offset: start, length: range.kind === 'partial' ? length : 0, patchBaseSha256: signed.patch ?? '' },
        rpc(ctx),
      );
      const iterator = chunks[Symbol.asyncIterator]();
      // Wait for the first chunk, so that a missing object is a clean error and not a cut-off body.
      const first = await iterator.next();
      if (!first.done && first.value.offset !== start) {
        // An artifacts replica of the release before ranges sends the build from its start: during
        // that upgrade a resumed download is refused, and the device retries it.
        void iterator.return?.();
        throw unavailable('resumed downloads are not served during this upgrade; retry later');
      }
      answerHead();
      const body = Readable.from(
        (async function* () {
          let sent = 0;
          // Never more than the answer's Content-Length, whatever a service sends.
          const within = (chunk: Buffer) => chunk.subarray(0, length - sent);
          try {
            if (!first.done) {
              const chunk = within(first.value.chunk);
              sent += chunk.length;
              yield chunk;
            }
            for (let next = await iterator.next(); !next.done && sent < length; next = await iterator.next()) {
              const chunk = within(next.value.chunk);
              sent += chunk.length;
              yield chunk;
            }
            if (sent === length) void iterator.return?.();
          } catch (error) {
            // Every byte was sent and only the stream's end was lost (artifacts went away after the
            // last chunk): the download is whole. Ending the response normally keeps the device's
            // connection, which may already carry its next request, instead of cutting it.
            if (sent !== length) throw error;
          }
        })(),
      );
      // The status and the length are sent: a stream that breaks now (artifacts or S3 gone) can only
      // end the connection, so that the device sees a short download at once instead of waiting.
      body.once('error', (error) => {
        (ctx.state.logger as Logger).warn({ err: error, artifactId }, 'download stream broke after its headers were sent');
        ctx.res.destroy(error);
      });
      ctx.body = body;
    },
  );
}
