import Router from '@koa/router';
import { notFound } from '@ota/errors';
import type { Context } from 'koa';
import { authenticate, requireDeveloperToken, requirePersonalToken, type Principal } from '../auth/principal';
import type { GatewayDeps } from '../deps';
import { HttpError } from '../http/errors';
import { receiveUpload } from '../http/multipart';
import { artifactJson, auditJson, channelJson, checkStateOf, decisionJson, deviceJson, projectJson, tokenJson } from '../http/present';
import { checkEventsQuery, createPersonalTokenBody, createProjectBody, createProjectTokenBody, type CheckEventsQuery } from '../http/schemas';
import { UUID_PATTERN, parseBody, parseQuery } from '../http/validate';
import type { artifacts, registry } from '@ota/proto';

/** The developer API (spec 4.1 to 4.4) that the first end-to-end path needs. */
export function developerRoutes(deps: GatewayDeps): Router {
  const router = new Router({ prefix: '/api/v1' });
  const { clients, store, audit } = deps;
  router.use(authenticate(store));
  const rpc = (ctx: Context) => ({ requestId: ctx.state.requestId as string });

  /** The project in the path, if the caller may see it (decisions.md: else 404, never 403). */
  async function projectFor(ctx: Context, access: 'read' | 'write'): Promise<{ project: registry.Project; principal: Principal }> {
    const principal = requireDeveloperToken(ctx);
    const id = ctx.params.id as string;
    if (!UUID_PATTERN.test(id)) throw notFound('project not found');
    if (principal.token.kind === 'project' && principal.token.project_id !== id) throw notFound('project not found');
    const { project } = await clients.registry.getProject({ projectId: id }, rpc(ctx));
    const owns = project!.ownerId === principal.userId;
    if (!owns && !(principal.isStaff && access === 'read')) {
      if (principal.isStaff) throw new HttpError(403, 'staff may read, but not write to, projects they do not own');
      throw notFound('project not found');
    }
    return { project: project!, principal };
  }

  router.post('/projects/', async (ctx) => {
    const principal = requirePersonalToken(ctx);
    const body = parseBody<{ name: string }>(createProjectBody, ctx.request.body);
    const { project } = await clients.registry.createProject({ ownerId: principal.userId, name: body.name }, rpc(ctx));
    await audit.record(principal, { projectId: project!.id, action: 'project.created', targetType: 'project', targetId: project!.id });
    ctx.status = 201;
    ctx.body = projectJson(project!);
  });

  router.get('/projects/', async (ctx) => {
    const principal = requireDeveloperToken(ctx);
    if (principal.token.kind === 'project') {
      const { project } = await clients.registry.getProject({ projectId: principal.token.project_id }, rpc(ctx));
      ctx.body = [projectJson(project!)];
      return;
    }
    const { projects } = await clients.registry.listProjects({ ownerId: principal.userId }, rpc(ctx));
    ctx.body = projects.map(projectJson);
  });

  router.get('/projects/:id/', async (ctx) => {
    const { project } = await projectFor(ctx, 'read');
    ctx.body = projectJson(project);
  });

  router.get('/projects/:id/channels/', async (ctx) => {
    const { project } = await projectFor(ctx, 'read');
    const { channels } = await clients.registry.listChannels({ projectId: project.id }, rpc(ctx));
    ctx.body = channels.map(channelJson);
  });

  router.get('/me/tokens/', async (ctx) => {
    const principal = requirePersonalToken(ctx);
    ctx.body = (await store.listTokens({ userId: principal.userId, kind: 'personal' })).map((token) => tokenJson(token));
  });

  router.post('/me/tokens/', async (ctx) => {
    const principal = requirePersonalToken(ctx);
    const body = parseBody<{ name: string }>(createPersonalTokenBody, ctx.request.body);
    const { token, raw } = await store.createToken({
      kind: 'personal',
      scope: '',
      name: body.name,
      userId: principal.userId,
      projectId: '',
      deviceUuid: '',
      deviceId: '',
    });
    ctx.status = 201;
    ctx.body = tokenJson(token, raw);
  });

  router.get('/projects/:id/tokens/', async (ctx) => {
    const { project } = await projectFor(ctx, 'read');
    ctx.body = (await store.listTokens({ projectId: project.id, kind: 'project' })).map((token) => tokenJson(token));
  });

  router.post('/projects/:id/tokens/', async (ctx) => {
    const { project, principal } = await projectFor(ctx, 'write');
    const body = parseBody<{ name: string; scope: 'api' | 'device' }>(createProjectTokenBody, ctx.request.body);
    const { token, raw } = await store.createToken({
      kind: 'project',
      scope: body.scope,
      name: body.name,
      userId: project.ownerId,
      projectId: project.id,
      deviceUuid: '',
      deviceId: '',
    });
    await audit.record(principal, {
      projectId: project.id,
      action: 'token.created',
      targetType: 'token',
      targetId: token._id,
      details: { scope: body.scope, prefix: token.prefix },
    });
    ctx.status = 201;
    ctx.body = tokenJson(token, raw);
  });

  router.get('/projects/:id/devices/', async (ctx) => {
    const { project } = await projectFor(ctx, 'read');
    const [{ devices }, { deployments }] = await Promise.all([
      clients.registry.listDevices({ projectId: project.id }, rpc(ctx)),
      clients.rollout.listDeployments({ projectId: project.id }, rpc(ctx)),
    ]);
    const active = deployments.filter((deployment) => deployment.state === 'active');
    ctx.body = devices.map((device) => deviceJson(device, checkStateOf(device, active)));
  });

  router.get('/projects/:id/devices/:did/', async (ctx) => {
    const { project } = await projectFor(ctx, 'read');
    const did = ctx.params.did as string;
    if (!UUID_PATTERN.test(did)) throw notFound('device not found');
    const [{ device }, { deployments }] = await Promise.all([
      clients.registry.getDevice({ projectId: project.id, id: did, deviceId: '' }, rpc(ctx)),
      clients.rollout.listDeployments({ projectId: project.id }, rpc(ctx)),
    ]);
    ctx.body = deviceJson(device!, checkStateOf(device!, deployments.filter((deployment) => deployment.state === 'active')));
  });

  router.get('/projects/:id/devices/:did/check-events/', async (ctx) => {
    const { project } = await projectFor(ctx, 'read');
    const query = parseQuery<CheckEventsQuery>(checkEventsQuery, { ...ctx.query });
    const did = ctx.params.did as string;
    if (!UUID_PATTERN.test(did)) throw notFound('device not found');
    await clients.registry.getDevice({ projectId: project.id, id: did, deviceId: '' }, rpc(ctx));
    const { decisions } = await clients.telemetry.listDecisions(
      {
        projectId: project.id,
        deviceId: did,
        limit: query.limit ? Number(query.limit) : 20,
        since: query.since ? new Date(query.since) : undefined,
        decision: query.decision ?? '',
        status: query.status ?? '',
      },
      rpc(ctx),
    );
    ctx.body = decisions.map(decisionJson);
  });

  router.get('/projects/:id/audit/', async (ctx) => {
    const { project } = await projectFor(ctx, 'read');
    const { events } = await clients.telemetry.listAuditEvents({ projectId: project.id }, rpc(ctx));
    ctx.body = events.map(auditJson);
  });

  router.post('/projects/:id/artifacts/', async (ctx) => {
    const { project, principal } = await projectFor(ctx, 'write');
    const { artifact } = await uploadArtifact(ctx, project, async () => undefined);
    await audit.record(principal, {
      projectId: project.id,
      action: 'artifact.uploaded',
      targetType: 'artifact',
      targetId: artifact.id,
      details: { build_number: artifact.buildNumber },
    });
    ctx.status = 201;
    ctx.body = artifactJson(artifact);
  });

  router.post('/projects/:id/release/', async (ctx) => {
    const { project, principal } = await projectFor(ctx, 'write');
    // The remaining fields are checked before the upload is committed: a bad channel or
    // percentage cancels the upload, so a refused release leaves no artifact behind.
    const { artifact, rest } = await uploadArtifact(ctx, project, async (fields) => {
      const channelName = fields.get('channel_name') ?? 'stable';
      const percentageText = fields.get('rollout_percentage') ?? '100';
      if (!/^\d{1,3}$/.test(percentageText) || Number(percentageText) > 100) {
        throw new HttpError(400, 'rollout_percentage must be an integer from 0 to 100');
      }
      const { channels } = await clients.registry.listChannels({ projectId: project.id }, rpc(ctx));
      const channel = channels.find((candidate) => candidate.name === channelName);
      if (!channel) throw new HttpError(400, `channel "${channelName}" does not exist in this project`);
      return { channel, rolloutPercentage: Number(percentageText) };
    });
    const { deployment } = await clients.rollout.createDeployment(
      {
        projectId: project.id,
        artifactId: artifact.id,
        targetGroupIds: [],
        targetChannelIds: [rest.channel.id],
        rolloutPercentage: rest.rolloutPercentage,
        rolloutStrategy: 'immediate',
        notes: '',
        start: true,
      },
      rpc(ctx),
    );
    await audit.record(principal, {
      projectId: project.id,
      action: 'release.created',
      targetType: 'deployment',
      targetId: deployment!.id,
      details: { artifact_id: artifact.id, build_number: artifact.buildNumber, channel: rest.channel.name },
    });
    ctx.status = 201;
    ctx.body = {
      artifact_id: artifact.id,
      build_number: artifact.buildNumber,
      deployment_id: deployment!.id,
      state: deployment!.state,
      channel: rest.channel.name,
    };
  });

  /**
   * Streams the multipart binary to the artifacts service. `checkRest` sees every other form
   * field once the body has been read; if it throws, the upload is cancelled before it commits.
   */
  async function uploadArtifact<R>(
    ctx: Context,
    project: registry.Project,
    checkRest: (fields: Map<string, string>) => Promise<R>,
  ): Promise<{ artifact: artifacts.Artifact; rest: R }> {
    const owner = await store.findUser(project.ownerId);
    const maxUploadsPerMonth = owner?.plan.max_uploads_per_month ?? 0;
    let rest: R | undefined;
    const response = await receiveUpload(ctx, deps.config.MANIFEST_LIMIT_BYTES, ({ manifest, binary, complete }) => {
      const messages = async function* () {
        yield { part: { $case: 'header' as const, header: { projectId: project.id, ownerId: project.ownerId, manifestJson: manifest, maxUploadsPerMonth } } };
        for await (const chunk of binary) yield { part: { $case: 'chunk' as const, chunk } };
        rest = await checkRest(await complete);
      };
      return clients.artifacts.uploadArtifact(messages(), rpc(ctx));
    });
    return { artifact: response.artifact!, rest: rest as R };
  }

  return router;
}
