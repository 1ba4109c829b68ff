import { integer, parse, UsageError } from './args';
import { ApiRefusal, ok, type Api, type BodyOf, type Schemas } from './client';
import { EXIT } from './exit-codes';
import { imageSummary } from './image';
import { table, type Output } from './output';
import { progressLine } from './progress';
import { MANIFEST_FLAGS, manifestText, readBinary, uploadOnce } from './release';

/** What every command gets: the API, the project (resolved lazily: `projects` needs none), and where to write. */
export interface CommandContext {
  api: Api;
  projectId: () => Promise<string>;
  out: Output;
  consoleUrl: string;
}

const TRANSITIONS = ['pause', 'resume', 'complete', 'cancel'] as const;

const TRANSITION_FLAGS = { 'if-version': { type: 'string' }, 'override-holds': { type: 'boolean', default: false } } as const;

export async function deploymentsCommand(ctx: CommandContext, argv: string[]): Promise<number> {
  const { values: flags, positionals } = parse(argv, TRANSITION_FLAGS);
  const [action = 'list', id, value] = positionals;
  if (flags['if-version'] !== undefined && !((TRANSITIONS as readonly string[]).includes(action) || action === 'ramp')) {
    throw new UsageError('--if-version goes with pause, resume, ramp, complete and cancel');
  }
  const projectId = await ctx.projectId();
  const path = (did: string) => ({ path: { id: projectId, did } });
  const need = (what: string) => {
    if (!id) throw new UsageError(`otactl deployments ${action} needs a ${what}`);
    return id;
  };
  if (action === 'list') {
    const deployments = await ok(ctx.api.GET('/api/v1/projects/{id}/deployments/', { params: { path: { id: projectId } } }));
    ctx.out.result(
      deployments,
      table(
        ['ID', 'BUILD', 'VERSION', 'STATE', 'ROLLOUT', 'FAILURES', 'CREATED'],
        deployments.map((d) => [d.id, d.build_number, d.version_label, d.state, `${d.rollout_percentage}%`, d.failure_count, d.created_at]),
      ),
    );
    return EXIT.ok;
  }
  if (action === 'show') {
    const did = need('deployment id');
    const [deployment, summary] = await Promise.all([
      ok(ctx.api.GET('/api/v1/projects/{id}/deployments/{did}/', { params: path(did) })),
      ok(ctx.api.GET('/api/v1/projects/{id}/deployments/{did}/summary/', { params: path(did) })),
    ]);
    const pause = deployment.guardrail_pause ? `\nguardrail pause: ${deployment.guardrail_pause.detail}` : '';
    ctx.out.result({ deployment, summary }, `${progressLine(deployment, summary)} (version ${deployment.version})${pause}\nconsole: ${ctx.consoleUrl}/console/projects/${projectId}/deployments/${did}`);
    return EXIT.ok;
  }
  if ((TRANSITIONS as readonly string[]).includes(action) || action === 'ramp') {
    const did = need('deployment id');
    const body: BodyOf<'transitionDeployment'> =
      action === 'ramp'
        ? { action: 'ramp' as const, rollout_percentage: integer(value ?? '', 'the ramp percentage', 0, 100) }
        : { action: action as (typeof TRANSITIONS)[number] };
    // A resume may state the percentage it resumes at; one a guardrail paused must (docs/api.md, "Deployment states").
    if (action === 'resume' && value !== undefined) body.rollout_percentage = integer(value, 'the percentage it resumes at', 0, 100);
    if (flags['override-holds']) body.override_holds = true;
    // --if-version: apply only to the version the caller saw (`show` prints it); a deployment that
    // changed since is refused with what it is now (docs/api.md, "Changing a deployment safely").
    const ifMatch = flags['if-version'] === undefined ? {} : { header: { 'If-Match': `"${integer(flags['if-version'], '--if-version', 1, Number.MAX_SAFE_INTEGER)}"` } };
    const deployment = await ok(ctx.api.POST('/api/v1/projects/{id}/deployments/{did}/transition/', { params: { ...path(did), ...ifMatch }, body }));
    ctx.out.result(deployment, `deployment ${deployment.id}: ${deployment.state} at ${deployment.rollout_percentage}% (version ${deployment.version})`);
    return EXIT.ok;
  }
  if (action === 'preview') {
    const did = need('deployment id');
    const preview = await ok(ctx.api.GET('/api/v1/projects/{id}/deployments/{did}/preview/', { params: path(did) }));
    ctx.out.result(
      preview,
      `${preview.device_count} devices${preview.as_if_active ? ` (as if active at ${preview.rollout_percentage}%)` : ''}\n` +
        table(['OUTCOME', 'DEVICES', 'FOR EXAMPLE'], Object.entries(preview.outcomes).map(([outcome, { count, device_ids }]) => [outcome, count, device_ids.slice(0, 5).join(', ')])),
    );
    return EXIT.ok;
  }
  throw new UsageError(`unknown deployments action "${action}": list, show, pause, resume, ramp, complete, cancel, preview`);
}

export async function artifactsCommand(ctx: CommandContext, argv: string[]): Promise<number> {
  const [action = 'list', ...rest] = argv;
  const projectId = await ctx.projectId();
  const list = () => ok(ctx.api.GET('/api/v1/projects/{id}/artifacts/', { params: { path: { id: projectId } } }));
  const row = (a: Schemas['Artifact']) => [a.id, a.build_number, a.version_label, `${a.framework}/${a.chip_family}`, imageSummary(a), a.file_size, a.archived ? 'yes' : 'no', a.created_at];
  const headers = ['ID', 'BUILD', 'VERSION', 'HARDWARE', 'IMAGE', 'BYTES', 'ARCHIVED', 'UPLOADED'];
  if (action === 'list') {
    const artifacts = await list();
    ctx.out.result(artifacts, table(headers, artifacts.map(row)));
    return EXIT.ok;
  }
  if (action === 'upload') {
    const { values } = parse(rest, MANIFEST_FLAGS);
    const artifact = await uploadOnce(ctx.api, projectId, readBinary(values.binary), manifestText(values));
    ctx.out.result(artifact, `uploaded build ${artifact.build_number} (${artifact.version_label}), SHA-256 ${artifact.checksum_sha256}, id ${artifact.id}; image: ${imageSummary(artifact)}`);
    return EXIT.ok;
  }
  if (action === 'archive' || action === 'unarchive') {
    const aid = rest[0];
    if (!aid) throw new UsageError(`otactl artifacts ${action} needs an artifact id`);
    const change: BodyOf<'updateArtifact'> = { archived: action === 'archive' };
    const artifact = await ok(ctx.api.PATCH('/api/v1/projects/{id}/artifacts/{aid}/', { params: { path: { id: projectId, aid } }, body: change }));
    ctx.out.result(artifact, `build ${artifact.build_number}: ${artifact.archived ? 'archived' : 'not archived'}`);
    return EXIT.ok;
  }
  if (action === 'prune') {
    const { values } = parse(rest, { keep: { type: 'string' }, 'dry-run': { type: 'boolean', default: false } });
    const keep = integer(values.keep ?? '', '--keep', 0, 1_000_000);
    const [artifacts, deployments] = await Promise.all([list(), ok(ctx.api.GET('/api/v1/projects/{id}/deployments/', { params: { path: { id: projectId } } }))]);
    // A build an unfinished deployment uses stays (the API refuses to archive it anyway).
    const inUse = new Set(deployments.filter((d) => ['draft', 'active', 'paused'].includes(d.state)).map((d) => d.artifact_id));
    const live = artifacts.filter((a) => !a.archived).sort((a, b) => b.build_number - a.build_number);
    const older = live.slice(keep).filter((a) => !inUse.has(a.id));
    if (!values['dry-run']) {
      const archive: BodyOf<'updateArtifact'> = { archived: true };
      for (const artifact of older) await ok(ctx.api.PATCH('/api/v1/projects/{id}/artifacts/{aid}/', { params: { path: { id: projectId, aid: artifact.id } }, body: archive }));
    }
    ctx.out.result(
      { archived: values['dry-run'] ? [] : older.map((a) => a.id), would_archive: values['dry-run'] ? older.map((a) => a.id) : [], kept: live.length - older.length },
      `${values['dry-run'] ? 'would archive' : 'archived'} ${older.length} build${older.length === 1 ? '' : 's'}${older.length ? `: ${older.map((a) => a.build_number).join(', ')}` : ''}; kept ${live.length - older.length} (the newest ${keep} and any an unfinished deployment uses)`,
    );
    return EXIT.ok;
  }
  throw new UsageError(`unknown artifacts action "${action}": list, upload, archive, unarchive, prune`);
}

/** The device list's filters as flags, shared by `devices list` and `groups add|remove`. */
const DEVICE_FILTER_FLAGS = { group: { type: 'string' }, channel: { type: 'string' }, search: { type: 'string' }, 'chip-family': { type: 'string' }, active: { type: 'string' } } as const;

type DeviceFilterFlags = { group?: string; channel?: string; search?: string; 'chip-family'?: string; active?: string };

/** The filters of the flags, with groups and channels named by their ids (the API's form). */
async function deviceFiltersOf(ctx: CommandContext, projectId: string, values: DeviceFilterFlags) {
  const path = { id: projectId };
  const [groups, channels] = await Promise.all([ok(ctx.api.GET('/api/v1/projects/{id}/groups/', { params: { path } })), ok(ctx.api.GET('/api/v1/projects/{id}/channels/', { params: { path } }))]);
  const idOf = (name: string | undefined, known: Array<{ id: string; name: string }>, kind: string) => {
    if (!name) return undefined;
    const found = known.find((candidate) => candidate.name === name);
    if (!found) throw new ApiRefusal(400, `no ${kind} named "${name}"`);
    return found.id;
  };
  if (values.active !== undefined && values.active !== 'true' && values.active !== 'false') throw new UsageError('--active is true or false');
  return {
    groups,
    channels,
    filters: { group_id: idOf(values.group, groups, 'group'), channel_id: idOf(values.channel, channels, 'channel'), search: values.search, chip_family: values['chip-family'], active: values.active as 'true' | 'false' | undefined },
  };
}

/** How often `groups add|remove` asks how far the change has come. */
const CHANGE_POLL_MS = 1_000;

export async function groupsCommand(ctx: CommandContext, argv: string[]): Promise<number> {
  const [action, name, ...rest] = argv;
  if (action !== 'add' && action !== 'remove') throw new UsageError(`unknown groups action "${action ?? ''}": add, remove`);
  if (!name) throw new UsageError(`otactl groups ${action} needs the group's name`);
  const { values } = parse(rest, DEVICE_FILTER_FLAGS);
  const projectId = await ctx.projectId();
  const { groups, filters } = await deviceFiltersOf(ctx, projectId, values);
  const group = groups.find((candidate) => candidate.name === name);
  if (!group) throw new ApiRefusal(400, `no group named "${name}"`);
  const matching = {
    ...(filters.active ? { active: filters.active === 'true' } : {}),
    ...(filters.group_id ? { group_id: filters.group_id } : {}),
    ...(filters.channel_id ? { channel_id: filters.channel_id } : {}),
    ...(filters.chip_family ? { chip_family: filters.chip_family } : {}),
    ...(filters.search ? { search: filters.search } : {}),
  };
  const path = { id: projectId, gid: group.id };
  let change = await ok(ctx.api.POST('/api/v1/projects/{id}/groups/{gid}/members/bulk-changes/', { params: { path }, body: { action, matching } }));
  while (change.state === 'running') {
    ctx.out.progress(`${action === 'add' ? 'adding to' : 'removing from'} ${name}: ${Math.floor(change.share_done * 100)}% of the project walked, ${change.devices_matched} matching, ${action === 'add' ? `${change.added} added` : `${change.removed} removed`}`);
    await new Promise((resolve) => setTimeout(resolve, CHANGE_POLL_MS));
    change = await ok(ctx.api.GET('/api/v1/projects/{id}/groups/{gid}/members/bulk-changes/{bid}/', { params: { path: { ...path, bid: change.id } } }));
  }
  ctx.out.endProgress();
  const changed = action === 'add' ? `added ${change.added} devices to ${name}` : `removed ${change.removed} devices from ${name}`;
  if (change.state === 'failed') {
    ctx.out.result(change, `${changed} before the change failed: ${change.detail}`);
    return EXIT.other;
  }
  ctx.out.result(change, `${changed} (${change.devices_matched} matched)`);
  return EXIT.ok;
}

export async function devicesCommand(ctx: CommandContext, argv: string[]): Promise<number> {
  const [action = 'list', ...rest] = argv;
  const projectId = await ctx.projectId();
  if (action === 'list') {
    const { values } = parse(rest, { ...DEVICE_FILTER_FLAGS, limit: { type: 'string', default: '50' } });
    const path = { id: projectId };
    const { channels, filters } = await deviceFiltersOf(ctx, projectId, values);
    const { data, error, response } = await ctx.api.GET('/api/v1/projects/{id}/devices/', {
      params: {
        path,
        query: {
          limit: integer(values.limit ?? '50', '--limit', 1, 1000),
          group_id: filters.group_id,
          channel_id: filters.channel_id,
          q: filters.search,
          chip_family: filters.chip_family,
          active: filters.active,
        },
      },
    });
    const devices = await ok(Promise.resolve({ data, error, response }));
    // A large project's count is an estimate, sent under its own header.
    const estimate = response.headers.get('x-total-count-estimate');
    const total = Number(estimate ?? response.headers.get('x-total-count') ?? devices.length);
    const channelNames = new Map(channels.map((channel) => [channel.id, channel.name]));
    ctx.out.result(
      { devices, total, total_estimated: estimate !== null },
      `${table(
        ['DEVICE', 'HARDWARE', 'BUILD', 'LAST OTA STATUS', 'LAST SEEN', 'CHANNEL', 'ACTIVE'],
        devices.map((d) => [d.device_id, `${d.framework}/${d.chip_family}`, d.current_build_number, `${d.last_ota_status}${d.last_ota_reason ? ` (${d.last_ota_reason})` : ''}`, d.last_seen ?? 'never', channelNames.get(d.channel_id) ?? '', d.active ? 'yes' : 'no'])
      )}\n${devices.length} of ${estimate !== null ? 'about ' : ''}${total}`,
    );
    return EXIT.ok;
  }
  if (action === 'show') {
    const key = rest[0];
    if (!key) throw new UsageError('otactl devices show needs a device id (its UUID or its device_id)');
    const path = { id: projectId };
    let uuid = key;
    if (!/^[0-9a-f-]{36}$/.test(key)) {
      const found = await ok(ctx.api.GET('/api/v1/projects/{id}/devices/', { params: { path, query: { device_id: key, limit: 1 } } }));
      const device = found[0];
      if (!device) throw new ApiRefusal(404, `no device with device_id "${key}"`);
      uuid = device.id;
    }
    const did = { path: { id: projectId, did: uuid } };
    const [device, events, checks] = await Promise.all([
      ok(ctx.api.GET('/api/v1/projects/{id}/devices/{did}/', { params: did })),
      ok(ctx.api.GET('/api/v1/projects/{id}/devices/{did}/events/', { params: did })),
      ok(ctx.api.GET('/api/v1/projects/{id}/devices/{did}/check-events/', { params: did })),
    ]);
    const timeline = [
      ...events.map((event) => ({ at: event.created_at, line: `reported ${event.event}${event.reason ? ` (${event.reason})` : ''}${event.build_number !== null ? ` build ${event.build_number}` : ''}` })),
      ...checks.map((check) => ({ at: check.created_at, line: `checked: ${check.status} (ran build ${check.reported_build_number ?? '?'})` })),
    ].sort((a, b) => b.at.localeCompare(a.at));
    ctx.out.result(
      { device, events, check_events: checks },
      `${device.device_id} (${device.id}) · build ${device.current_build_number} ${device.current_version_label} · last OTA status ${device.last_ota_status || 'none'}${device.last_ota_reason ? ` (${device.last_ota_reason})` : ''} · ${device.active ? 'active' : 'deactivated'}\n${timeline.map((entry) => `${entry.at}  ${entry.line}`).join('\n') || '(no timeline yet)'}`,
    );
    return EXIT.ok;
  }
  throw new UsageError(`unknown devices action "${action}": list, show`);
}

export async function projectsCommand(ctx: CommandContext, argv: string[]): Promise<number> {
  if ((argv[0] ?? 'list') !== 'list') throw new UsageError(`unknown projects action "${argv[0]}": list`);
  const projects = await ok(ctx.api.GET('/api/v1/projects/', {}));
  ctx.out.result(projects, table(['ID', 'NAME', 'SLUG', 'CREATED'], projects.map((p) => [p.id, p.name, p.slug, p.created_at])));
  return EXIT.ok;
}
