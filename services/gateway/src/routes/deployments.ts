import { invalidArgument } from '@ota/errors';
import type { rollout } from '@ota/proto';
import type { GatewayDeps } from '../deps';
import type { OperationTable } from '../http/operations';
import { deploymentHealthJson, deploymentJson, downloadsJson, deploymentPreviewJson, deploymentSummaryJson, deviceStateJson } from '../http/present';
import * as R from '../http/response-schemas';
import { ValidationFailed } from '../http/errors';
import { createDeploymentBody, listStatesQuery, previewQuery, STATES_PAGE_MAX, transitionBody, type GuardrailsBody } from '../http/schemas';
import { holdsJson } from '../use-cases/build-holds';
import { createDeployment, deploymentProgress, transitionDeployment } from '../use-cases/deployments';
import { raiseDetails } from '../use-cases/release';
import { checkSecureVersionRaise } from '../use-cases/secure-version-raise';
import { answerOncePerKey, IDEMPOTENCY_PARAMETER, jsonFingerprint } from '../http/idempotency';
import { callerOf, idempotencyOptions, pathId, rpc, useCasePorts } from './context';

/** Device health is counted in periods of this length (HEALTH_PERIOD_MS in @ota/decision). */
const HEALTH_PERIOD_MINUTES = 15;

const DEPLOYMENT_ETAG = { description: 'The deployment\'s `version` in quotes: send it back as `If-Match` to change only what you saw.', schema: { type: 'string' } };
const IF_MATCH_PARAMETER = {
  name: 'If-Match',
  required: false,
  schema: { type: 'string', pattern: '^(\\*|"[1-9][0-9]{0,15}"|[1-9][0-9]{0,15})$' },
  description:
    'The `ETag` (`"<version>"`) of the deployment as the caller saw it, or its `version` bare (`3`, what a generated client passes): the transition applies only to that version (409 otherwise). `*` or absent: whatever it is now.',
};

/** The ETag of a deployment's version. */
function etagOfVersion(version: number): string {
  return `"${version}"`;
}

/** A header's one value as sent; undefined when it was not sent. Sent twice, the values joined, which no If-Match matches. */
function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * The version an If-Match names: the ETag `"<version>"`, or the version bare (what a client
 * generated from the document sends from `version`, which no ETag is mistaken for); undefined for
 * none or `*`; 400 for anything else.
 */
function versionOfIfMatch(header: string | undefined): number | undefined {
  if (header === undefined || header.trim() === '*') return undefined;
  const match = /^\s*(?:"([1-9][0-9]{0,15})"|([1-9][0-9]{0,15}))\s*$/.exec(header);
  if (!match) throw invalidArgument('If-Match must be the deployment\'s ETag, "<version>", or its version (or *)');
  return Number(match[1] ?? match[2]);
}

export function deploymentRoutes(table: OperationTable, deps: GatewayDeps): void {
  const api = table.section({ tag: 'Deployments', access: 'developer' });
  const { clients, audit } = deps;
  const ports = useCasePorts(deps);

  api.add(
    { route: 'GET /projects/:id/deployments/', operationId: 'listDeployments', summary: 'List deployments', description: 'Newest first.', project: 'viewer', responses: { 200: R.arrayOf(R.Deployment) } },
    async (ctx, { project }) => {
      ctx.body = (await clients.rollout.listDeployments({ projectId: project.id }, rpc(ctx))).deployments.map(deploymentJson);
    },
  );

  api.add(
    {
      route: 'POST /projects/:id/deployments/',
      operationId: 'createDeployment',
      summary: 'Create a deployment (draft)',
      description:
        'Targets are fixed at creation. Within each list any id matches; with both lists set a device must match a group and a channel; empty lists target every device (starting then needs `confirm_all`). Ids that are not groups or channels of the project are 400, and so is an archived artifact.',
      project: 'operator',
      roleNote: 'A build that raises secure_version (`acknowledge_secure_version_raise`) needs the approver role.',
      body: createDeploymentBody,
      headers: [IDEMPOTENCY_PARAMETER],
      responses: { 201: R.Deployment },
      errors: [409],
    },
    async (ctx, { project, principal, role, body }) => {
      const fingerprint = jsonFingerprint(body);
      await answerOncePerKey(ctx, `${project.id}:createDeployment`, idempotencyOptions(deps), async () => {
        const caller = { ...callerOf(ctx), role };
        const raise = await checkSecureVersionRaise(ports, caller, project.id, body.artifact_id, body.acknowledge_secure_version_raise ?? false);
        const deployment = await createDeployment(ports, caller, project.id, {
          artifactId: body.artifact_id,
          targetGroupIds: body.target_group_ids ?? [],
          targetChannelIds: body.target_channel_ids ?? [],
          rolloutPercentage: body.rollout_percentage,
          rolloutStrategy: body.rollout_strategy ?? '',
          notes: body.notes ?? '',
          guardrails: body.guardrails && guardrailsMessage(body.guardrails),
          stages: (body.stages ?? []).map((stage) => ({ percentage: stage.percentage, minWaitSeconds: stage.min_wait_seconds ?? 0, approvalRequired: stage.approval_required ?? false })),
          caps: body.caps && { offersPerMinute: body.caps.offers_per_minute, maxInProgress: body.caps.max_in_progress },
          maintenance: body.maintenance_windows && {
            timeZone: body.maintenance_windows.time_zone,
            inDeviceLocalTime: body.maintenance_windows.in_device_local_time ?? false,
            windows: body.maintenance_windows.windows.map((window) => ({ days: [...window.days], start: window.start, durationMinutes: window.duration_minutes })),
          },
        });
        await audit.record(principal, {
          projectId: project.id,
          action: 'deployment.created',
          targetType: 'deployment',
          targetId: deployment.id,
          details: {
            artifact_id: body.artifact_id,
            rollout_percentage: deployment.rolloutPercentage,
            guardrails: body.guardrails,
            stages: body.stages,
            maintenance_windows: body.maintenance_windows,
            caps: body.caps,
            ...raiseDetails(raise),
          },
        });
        return { fingerprint, status: 201, body: deploymentJson(deployment) };
      }, async () => fingerprint);
    },
  );

  api.add(
    {
      route: 'GET /projects/:id/deployments/:did/',
      operationId: 'getDeployment',
      summary: 'Read a deployment',
      project: 'viewer',
      responses: { 200: R.Deployment },
      responseHeaders: { 200: { ETag: DEPLOYMENT_ETAG } },
    },
    async (ctx, { project }) => {
      const { deployment } = await clients.rollout.getDeployment({ projectId: project.id, deploymentId: pathId(ctx, 'did', 'deployment') }, rpc(ctx));
      ctx.set('ETag', etagOfVersion(deployment!.version));
      ctx.body = deploymentJson(deployment!);
    },
  );

  api.add(
    {
      route: 'POST /projects/:id/deployments/:did/transition/',
      operationId: 'transitionDeployment',
      summary: 'Start, pause, resume, ramp, complete or cancel',
      description:
        'start: draft→active. pause: active→paused. resume: paused→active. ramp (needs `rollout_percentage`, up or down): active or paused, state unchanged. complete: active or paused→completed. cancel: draft, active or paused→cancelled. Anything else is 400. `start` and `resume` of a deployment without targets need `confirm_all: true` when the project has two or more devices. ' +
        "A `resume` states what it resumes to with `rollout_percentage`, which must be the deployment's own (409 otherwise); one a guardrail paused needs it (400). " +
        'A `start`, `resume` or upward `ramp` of a build that another deployment of it holds back (a guardrail pause, an approval gate ahead: docs/api.md, "Holds on a build") is 403 below the approver role, and 400 for an approver without `override_holds: true`. ' +
        'With `If-Match: "<version>"` (the `ETag` of the deployment as the caller saw it) the transition applies only to that version: one that changed since is 409, whose `detail` says what it is now.',
      project: 'operator',
      roleNote:
        '`resume` of a deployment a guardrail paused needs the approver role, and so does a `ramp` upwards while the next stage of a staged plan needs approval, and going around the holds on the build (`override_holds`).',
      body: transitionBody,
      headers: [IF_MATCH_PARAMETER],
      responses: { 200: R.TransitionedDeployment },
      responseHeaders: { 200: { ETag: DEPLOYMENT_ETAG } },
      errors: [409],
    },
    async (ctx, { project, role, body }) => {
      const { deployment, overriddenHolds } = await transitionDeployment(ports, { ...callerOf(ctx), role }, project.id, {
        deploymentId: pathId(ctx, 'did', 'deployment'),
        action: body.action,
        rolloutPercentage: body.rollout_percentage,
        confirmAll: body.confirm_all ?? false,
        // Present but empty is no header left out: it names no version (400), never "whatever it is now".
        expectedVersion: versionOfIfMatch(headerValue(ctx.request.headers['if-match'])),
        overrideHolds: body.override_holds ?? false,
      });
      ctx.set('ETag', etagOfVersion(deployment.version));
      ctx.body = { ...deploymentJson(deployment), overridden_holds: holdsJson(overriddenHolds) };
    },
  );

  api.add(
    {
      route: 'GET /projects/:id/deployments/:did/summary/',
      operationId: 'getDeploymentSummary',
      summary: 'Rollout progress in one call',
      description:
        'Devices per current rollout status, the failure count and failures per `reason`, and how many devices the targets reach, in any state. The store counts; no state record is read one by one, so the cost does not grow with a list of the fleet.',
      project: 'viewer',
      responses: { 200: R.DeploymentSummary },
    },
    async (ctx, { project }) => {
      const deploymentId = pathId(ctx, 'did', 'deployment');
      const progress = await deploymentProgress(ports, callerOf(ctx), project.id, deploymentId);
      ctx.body = deploymentSummaryJson(progress);
    },
  );

  api.add(
    {
      route: 'GET /projects/:id/deployments/:did/downloads/',
      operationId: 'countDeploymentDownloads',
      summary: 'How the build reached the devices: patches, whole images, bytes saved',
      description: "How the devices' images came, from the `detail` of each device's first `downloaded` report (docs/api.md, \"Delta patches\"): as a delta patch, whole, or whole after a patch was given up; and the bytes the patches saved. A deployment that does not exist in the project is 404.",
      project: 'viewer',
      responses: { 200: R.Downloads },
    },
    async (ctx, { project }) => {
      const deploymentId = pathId(ctx, 'did', 'deployment');
      const counts = await clients.rollout.countDownloads({ projectId: project.id, deploymentId, artifactId: '' }, rpc(ctx));
      const { deployment } = await clients.rollout.getDeployment({ projectId: project.id, deploymentId }, rpc(ctx));
      const { artifact } = await clients.artifacts.getArtifact({ projectId: project.id, artifactId: deployment!.artifactId }, rpc(ctx));
      ctx.body = downloadsJson(counts, Number(artifact!.fileSize));
    },
  );

  api.add(
    {
      route: 'GET /projects/:id/deployments/:did/health/',
      operationId: 'getDeploymentHealth',
      summary: 'How the build runs on devices, against those not yet updated',
      description:
        'Abnormal resets (panic, watchdogs, brownout) and hours run of the targeted devices, as their checks report `health`: on the deployment\'s build (`updated`) and on an earlier one (`previous`), per period of `period_minutes`, and summed as the `health_regression` guardrail judges them now (docs/api.md, "Device health"), with whether it judges now and, if not, why (`not_judging_because`). Counted only for a deployment with that guardrail, while it is active.',
      project: 'viewer',
      responses: { 200: R.DeploymentHealth },
    },
    async (ctx, { project }) => {
      const deploymentId = pathId(ctx, 'did', 'deployment');
      const [health, { deployment }] = await Promise.all([
        clients.rollout.getDeploymentHealth({ projectId: project.id, deploymentId }, rpc(ctx)),
        clients.rollout.getDeployment({ projectId: project.id, deploymentId }, rpc(ctx)),
      ]);
      ctx.body = deploymentHealthJson(health, HEALTH_PERIOD_MINUTES, deployment!);
    },
  );

  api.add(
    {
      route: 'GET /projects/:id/deployments/:did/preview/',
      operationId: 'previewDeployment',
      summary: 'Who a check would reach now',
      description:
        "What a check of each of the project's devices would answer now, counted by outcome with up to 20 `device_id`s each, decided by the check's own code from each device's last reported profile. A deployment that is not active is previewed as if it were started or resumed now (a draft at its first stage's percentage). `not_targeted`: outside the deployment's groups and channels; `unknown_hardware`: the device never reported its hardware, or left out a dimension a targeted build declares. Reads the whole fleet in pages, so its time grows with the fleet; it has its own deadline (`PREVIEW_TIMEOUT_MS`, default 60 s) in place of `REQUEST_TIMEOUT_MS`. A large fleet is previewed in parts: `id_prefix` keeps the devices whose `id` begins with those 1 or 2 hex digits (a 16th or a 256th of the fleet, read from one page bucket), and the parts' counts add up to the whole.",
      project: 'viewer',
      query: previewQuery,
      responses: { 200: R.DeploymentPreview },
    },
    async (ctx, { project, query }) => {
      const deploymentId = pathId(ctx, 'did', 'deployment');
      const idPrefix = query.id_prefix ?? '';
      // A preview reads the whole fleet: it gets a deadline of its own, not one unary call's.
      const preview = await clients.rollout.previewDeployment({ projectId: project.id, deploymentId, idPrefix }, { ...rpc(ctx), timeoutMs: deps.config.PREVIEW_TIMEOUT_MS });
      ctx.body = deploymentPreviewJson(deploymentId, idPrefix, preview);
    },
  );

  api.add(
    {
      route: 'GET /projects/:id/deployments/:did/states/',
      operationId: 'listDeviceStates',
      summary: 'Per-device rollout states',
      description:
        "One record per device that was offered the deployment or reported a result; `device_id` is the device UUID. A device silent past the confirm timeout is `failed` with reason `no_confirmation`. `status` keeps one status. Without `limit`, every record, most recently changed first. With `limit` the list comes a page at a time in the order of the devices' UUIDs: the next page with `after_id` set to this answer's `X-Next-After-Id` (absent on the last page). A page reads the deployment one slice of UUIDs at a time, so its cost follows the page, not the deployment; with a `status` few devices are at, a page may be shorter than `limit`, or empty, with `X-Next-After-Id` saying where to go on. `X-Total-Count` counts every match when that is cheap; otherwise `X-Total-Count-Estimate` extrapolates from the share of the deployment read.",
      project: 'viewer',
      query: listStatesQuery,
      responses: { 200: R.arrayOf(R.DeviceState) },
      responseHeaders: {
        200: {
          'X-Total-Count': { description: 'With `limit`, when the page read every match: the records that match, on every page.', schema: { type: 'integer', minimum: 0 } },
          'X-Total-Count-Estimate': { description: 'With `limit`, instead of `X-Total-Count` when the matches are too many to count for a page: their number extrapolated from the share of the deployment read.', schema: { type: 'integer', minimum: 0 } },
          'X-Next-After-Id': { description: 'With `limit`: the `after_id` of the next page; absent on the last page.', schema: { type: 'string', format: 'uuid' } },
        },
      },
    },
    async (ctx, { project, query }) => {
      const refused = (field: string, msg: string) => new ValidationFailed([{ loc: ['query', field], msg, type: 'value_error' }]);
      if (query.offset !== undefined && query.offset !== 0) throw refused('offset', 'offset is no longer served: follow the pages with after_id, from X-Next-After-Id');
      if (query.after_id && !query.limit) throw refused('after_id', 'after_id needs limit');
      const limit = query.limit ? Math.min(Number(query.limit), STATES_PAGE_MAX) : 0;
      const listed = await clients.rollout.listDeviceStates({ projectId: project.id, deploymentId: pathId(ctx, 'did', 'deployment'), limit, afterId: query.after_id ?? '', status: query.status ?? '' }, rpc(ctx));
      if (limit) {
        ctx.set(listed.totalEstimated ? 'X-Total-Count-Estimate' : 'X-Total-Count', String(listed.total));
        if (listed.nextAfterId) ctx.set('X-Next-After-Id', listed.nextAfterId);
      }
      ctx.body = listed.states.map(deviceStateJson);
    },
  );
}

function guardrailsMessage(body: GuardrailsBody): rollout.Guardrails {
  const threshold = body.failure_threshold;
  return {
    failureThreshold: threshold && { percent: threshold.percent, minFinished: threshold.min_finished },
    reasonLimits: (body.reason_limits ?? []).map((limit) => ({ reason: limit.reason, count: limit.count, windowSeconds: limit.window_seconds })),
    confirmTimeoutSeconds: body.confirm_timeout_seconds,
    healthRegression: body.health_regression && {
      marginPercent: body.health_regression.margin_percent,
      significance: body.health_regression.significance,
      minDevices: body.health_regression.min_devices,
      minDeviceHours: body.health_regression.min_device_hours,
    },
  };
}
