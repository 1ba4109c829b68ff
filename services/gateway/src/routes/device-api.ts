import { randomUUID } from 'node:crypto';
import { invalidArgument, notFound, permissionDenied } from '@ota/errors';
import { registry } from '@ota/proto';
import type { Context } from 'koa';
import type { Logger } from '@ota/logging';
import { Readable } from 'node:stream';
import { principalOf, type Principal } from '../auth/principal';
import type { GatewayDeps } from '../deps';
import { jitteredSeconds } from '../http/load-shedding';
import type { OperationTable } from '../http/operations';
import * as R from '../http/response-schemas';
import { checkBody, statusBody, type CheckBody, type StatusBody } from '../http/schemas';
import { UUID_PATTERN, parseDeviceBody } from '../http/validate';

const MESSAGES = {
  over_limit: "the owner's plan device cap is reached; the device was not registered",
  device_inactive: 'the device is deactivated',
  token_required: 'this device has its own token: check with it, not with the project token',
} as const;

/** The device API (spec 4.5): business outcomes are 200 with a status, never errors. */
export function deviceApiRoutes(table: OperationTable, deps: GatewayDeps): void {
  const { clients } = deps;

  /** When the device should check next: the configured interval, jittered so that a fleet spreads out. */
  const pollAfter = (): { poll_after_seconds?: number } =>
    deps.config.CHECK_POLL_INTERVAL_SECONDS > 0 ? { poll_after_seconds: jitteredSeconds(deps.config.CHECK_POLL_INTERVAL_SECONDS) } : {};

  /** The device_id a request speaks for: from the body with a project token, from the token otherwise. */
  function deviceIdOf(principal: Principal, bodyDeviceId: string | undefined): string {
    if (principal.token.kind === 'device') {
      if (bodyDeviceId !== undefined && bodyDeviceId !== principal.token.device_id) {
        throw permissionDenied('this device token belongs to another device');
      }
      return principal.token.device_id;
    }
    if (bodyDeviceId === undefined) throw invalidArgument('device_id is required with a project token');
    return bodyDeviceId;
  }

  table.add(
    {
      method: 'post',
      path: '/ota/check/',
      operationId: 'checkForUpdate',
      summary: 'Device check',
      description:
        'Records a heartbeat, registers an unknown device (project token), and answers whether a compatible build is offered. Routine outcomes are 200 with `status`; real errors are 400 (malformed body, or a declared board_id/hardware_revision missing), 401 and 403.',
      tag: 'Device API',
      access: 'device',
      body: checkBody,
      responses: { 200: R.CheckResponse },
    },
    checkHandler,
  );
  async function checkHandler(ctx: Context) {
    const principal = principalOf(ctx);
    const body = parseDeviceBody<CheckBody>(checkBody, ctx.request.body);
    const deviceId = deviceIdOf(principal, body.device_id);
    const projectId = principal.token.project_id;
    const requestId = ctx.state.requestId as string;

    const canRegister = principal.token.kind === 'project';
    const maxDevices = canRegister ? (await deps.plans.planOf(principal.userId)).max_devices : 0;
    const reported = {
      framework: body.framework,
      chipFamily: body.chip_family,
      boardId: body.board_id,
      hardwareRevision: body.hardware_revision,
      partitionProfile: body.partition_profile,
      nvsSchemaVersion: body.nvs_schema_version,
      securityMode: body.security_mode,
      versionLabel: body.version_label,
      currentHash: body.current_hash,
    };
    const checkIn = await clients.registry.checkInDevice(
      { projectId, ownerId: principal.userId, deviceId, viaProjectToken: canRegister, maxDevices, reported },
      { requestId },
    );

    /**
     * Writes the check down before it is answered, so that a read right after the answer sees it:
     * the device's heartbeat (unless `heartbeat` is false) and outcome in one write, and the
     * decision record. Recording is best effort (spec 4.2): a failure is logged, the answer stands.
     */
    const recordCheck = async (status: string, message: string, heartbeat: boolean, offer?: { deploymentId: string; buildNumber: number }) => {
      const device = checkIn.device;
      // A device that was not registered (over_limit) has nothing to record on.
      if (!device) return;
      await clients.registry
        .recordCheck(
          {
            projectId,
            id: device.id,
            checkCount: device.checkCount,
            heartbeat,
            reported,
            event: {
              id: randomUUID(),
              projectId,
              deviceId,
              createdAt: new Date(),
              decision: offer ? 'offered' : 'no_update',
              status,
              deploymentId: offer?.deploymentId ?? '',
              artifactBuildNumber: offer?.buildNumber,
              reportedBuildNumber: body.current_build_number,
              reportedVersion: body.version_label ?? '',
              message,
            },
          },
          { requestId },
        )
        .catch((error: unknown) => (ctx.state.logger as Logger).warn({ err: error, device_id: deviceId }, 'check not recorded'));
    };

    if (checkIn.outcome === registry.CheckInOutcome.CHECK_IN_OUTCOME_OVER_LIMIT) {
      ctx.body = { update_available: false, status: 'over_limit', message: MESSAGES.over_limit, ...pollAfter() };
      return;
    }
    // An inactive device, and one that must use its own token, get no heartbeat (decisions.md 5).
    if (checkIn.outcome === registry.CheckInOutcome.CHECK_IN_OUTCOME_INACTIVE) {
      await recordCheck('device_inactive', MESSAGES.device_inactive, false);
      ctx.body = { update_available: false, status: 'device_inactive', message: MESSAGES.device_inactive, ...pollAfter() };
      return;
    }
    if (checkIn.outcome === registry.CheckInOutcome.CHECK_IN_OUTCOME_TOKEN_REQUIRED) {
      await recordCheck('token_required', MESSAGES.token_required, false);
      ctx.body = { update_available: false, status: 'token_required', message: MESSAGES.token_required, ...pollAfter() };
      return;
    }
    const device = checkIn.device!;
    const decision = await clients.rollout.decideOffer(
      {
        projectId,
        device: {
          id: device.id,
          channelId: device.channelId,
          groupIds: device.groupIds,
          framework: body.framework,
          chipFamily: body.chip_family,
          boardId: body.board_id ?? '',
          hardwareRevision: body.hardware_revision ?? '',
          boardIdReported: body.board_id !== undefined,
          hardwareRevisionReported: body.hardware_revision !== undefined,
          partitionProfile: body.partition_profile ?? '',
          nvsSchemaVersion: body.nvs_schema_version,
          securityMode: body.security_mode ?? '',
          currentBuildNumber: body.current_build_number,
        },
      },
      { requestId },
    );
    const offer = decision.offer;
    await recordCheck(decision.status, decision.message, true, offer);
    if (!offer) {
      ctx.body = { update_available: false, status: decision.status, message: decision.message, ...pollAfter() };
      return;
    }
    const baseUrl = deps.config.PUBLIC_BASE_URL || `${ctx.protocol}://${ctx.host}`;
    ctx.body = {
      update_available: true,
      build_number: offer.buildNumber,
      version: offer.versionLabel,
      url: deps.signer.sign(baseUrl, offer.artifactId, offer.fileSize),
      checksum: offer.checksumSha256,
      size: offer.fileSize,
      deployment_id: offer.deploymentId,
      security_mode: offer.securityMode,
      ...(offer.signature ? { signature: offer.signature, signing_key_id: offer.signingKeyId } : {}),
      ...pollAfter(),
    };
  }

  table.add(
    {
      method: 'post',
      path: '/ota/status/',
      operationId: 'reportStatus',
      summary: 'Device lifecycle event',
      description:
        'Events: offered, download_started, downloaded, flashed, validated, reboot, confirmed, failed, rolled_back, and the legacy rebooted. `accepted: true` comes only once the event is stored; repeating confirmed or rolled_back is a no-op. A deployment that does not exist in the project is 404.',
      tag: 'Device API',
      access: 'device',
      body: statusBody,
      responses: { 200: R.StatusResponse },
    },
    statusHandler,
  );
  async function statusHandler(ctx: Context) {
    const principal = principalOf(ctx);
    const body = parseDeviceBody<StatusBody>(statusBody, ctx.request.body);
    const deviceId = deviceIdOf(principal, body.device_id);
    if (body.event === 'confirmed' && body.build_number === undefined) throw invalidArgument('build_number is required with confirmed');
    const projectId = principal.token.project_id;
    const requestId = ctx.state.requestId as string;

    let deviceUuid = principal.token.device_uuid;
    if (principal.token.kind !== 'device') {
      const { device } = await clients.registry.getDevice({ projectId, id: '', deviceId }, { requestId });
      if (device!.tokenRequired) throw permissionDenied(MESSAGES.token_required);
      deviceUuid = device!.id;
    }
    const reason = body.reason ?? '';
    const result = await clients.rollout.recordDeviceEvent(
      {
        projectId,
        deploymentId: body.deployment_id,
        deviceId: deviceUuid,
        event: body.event,
        buildNumber: body.build_number,
        reason,
        detailJson: body.detail ? JSON.stringify(body.detail) : '',
      },
      { requestId },
    );
    await clients.registry.applyDeviceReport(
      {
        projectId,
        id: deviceUuid,
        event: result.finalStatus,
        reason,
        buildNumber: body.event === 'confirmed' ? body.build_number : undefined,
      },
      { requestId },
    );
    ctx.body = { accepted: result.accepted, final_status: result.finalStatus };
  }

  // Signed download URLs. No bearer token: the signature is the credential. The binary streams
  // from object storage through the artifacts service, one chunk at a time.
  table.add(
    {
      method: 'get',
      path: '/ota/download/:artifactId',
      operationId: 'downloadArtifact',
      summary: 'Download an offered build',
      description: 'The `url` of an offer. No bearer token: the HMAC signature is the credential. An altered or expired URL is 403.',
      tag: 'Device API',
      access: 'public',
      responses: { 200: { type: 'string', format: 'binary' } },
    },
    async (ctx) => {
    const artifactId = ctx.params.artifactId as string;
    if (!UUID_PATTERN.test(artifactId)) throw notFound('artifact not found');
    const query = ctx.query as Record<string, string | undefined>;
    const verdict = deps.signer.verify(artifactId, query.size ?? '', query.expires ?? '', query.signature ?? '');
    if (verdict === 'expired') throw permissionDenied('this download URL has expired; check again for a new one');
    if (verdict !== 'ok') throw permissionDenied('this download URL is not valid');

    const chunks = clients.artifacts.readArtifactBinary({ artifactId }, { requestId: ctx.state.requestId as string });
    const iterator = chunks[Symbol.asyncIterator]();
    // Wait for the first chunk, so that a missing object is a clean error and not a cut-off body.
    const first = await iterator.next();
    ctx.status = 200;
    ctx.type = 'application/octet-stream';
    ctx.length = Number(query.size);
    const body = Readable.from(
      (async function* () {
        if (!first.done) yield first.value.chunk;
        for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value.chunk;
      })(),
    );
    // The 200 and the length are sent: a stream that breaks now (artifacts or S3 gone) can only
    // end the connection, so that the device sees a short download at once instead of waiting.
    body.once('error', (error) => {
      (ctx.state.logger as Logger).warn({ err: error, artifactId }, 'download stream broke after its headers were sent');
      ctx.res.destroy(error);
    });
    ctx.body = body;
    },
  );
}
