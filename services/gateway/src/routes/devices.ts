import { profileMessage, profileOf } from '@ota/manifest';
import type { registry } from '@ota/proto';
import type { Context } from 'koa';
import type { GatewayDeps } from '../deps';
import type { OperationTable } from '../http/operations';
import { decisionJson, deviceEventJson } from '../http/present';
import * as R from '../http/response-schemas';
import {
  checkEventsQuery,
  cappedLimit,
  CHECK_EVENTS_LIMIT,
  DEVICE_EVENTS_LIMIT,
  deviceEventsQuery,
  createDeviceBody,
  DEVICE_PAGE_MAX,
  listDevicesQuery,
  reachQuery,
  updateDeviceBody,
} from '../http/schemas';
import { ValidationFailed } from '../http/errors';
import { deleteDeviceWithHistory } from '../use-cases/device-deletion';
import { provisionDevice } from '../use-cases/device-provisioning';
import { issueDeviceToken, revokeDeviceToken } from '../use-cases/device-tokens';
import { callerOf, pathId, presentDevices, rpc, useCasePorts } from './context';

export function deviceRoutes(table: OperationTable, deps: GatewayDeps): void {
  const api = table.section({ tag: 'Devices', access: 'developer' });
  const { clients, audit } = deps;
  const ports = useCasePorts(deps);

  /** The device in the path (`did`, its UUID), read from registry: 404 when the project has no such device. */
  async function deviceFor(ctx: Context, projectId: string): Promise<registry.Device> {
    const { device } = await clients.registry.getDevice({ projectId, id: pathId(ctx, 'did', 'device'), deviceId: '' }, rpc(ctx));
    return device!;
  }

  api.add(
    {
      route: 'GET /projects/:id/devices/',
      operationId: 'listDevices',
      summary: 'List devices',
      description:
        "Filters combine: with both `group_id` and `channel_id` a device must match both. An unknown id gives an empty list. With `limit` the list comes a page at a time, in the order of the devices' `id`s: the next page with `after_id` set to this answer's `X-Next-After-Id` (absent on the last page). A page reads the project one slice of `id`s at a time, so its cost follows the page, not the project; a text search that finds few devices in a large project may answer a page shorter than `limit`, or empty, with `X-Next-After-Id` saying where to go on. `X-Total-Count` counts every match when that is cheap; otherwise `X-Total-Count-Estimate` extrapolates from the share of the project read. Without `limit`, every match in one answer, ordered by `device_id`.",
      project: 'viewer',
      query: listDevicesQuery,
      responses: { 200: R.arrayOf(R.Device) },
      responseHeaders: {
        200: {
          'X-Total-Count': { description: 'With `limit`, when the page read every match: the devices that match the filters, on every page.', schema: { type: 'integer', minimum: 0 } },
          'X-Total-Count-Estimate': { description: 'With `limit`, instead of `X-Total-Count` when the matches are too many to count for a page: their number extrapolated from the share of the project read.', schema: { type: 'integer', minimum: 0 } },
          'X-Next-After-Id': { description: 'With `limit`: the `after_id` of the next page; absent on the last page.', schema: { type: 'string', format: 'uuid' } },
        },
      },
    },
    async (ctx, { project, query }) => {
      for (const cursor of ['after', 'after_id'] as const) {
        if (query[cursor] && !query.limit) throw new ValidationFailed([{ loc: ['query', cursor], msg: `${cursor} needs limit`, type: 'value_error' }]);
      }
      if (query.after && query.after_id) throw new ValidationFailed([{ loc: ['query', 'after_id'], msg: 'give after or after_id, not both', type: 'value_error' }]);
      const limit = query.limit ? Math.min(Number(query.limit), DEVICE_PAGE_MAX) : 0;
      const listed = await clients.registry.listDevices(
        {
          projectId: project.id,
          active: query.active === undefined ? undefined : query.active === 'true',
          groupId: query.group_id ?? '',
          channelId: query.channel_id ?? '',
          search: query.q ?? '',
          chipFamily: query.chip_family ?? '',
          deviceId: query.device_id ?? '',
          limit,
          afterDeviceId: query.after ?? '',
          afterId: query.after_id ?? '',
          ids: query.ids ? query.ids.split(',') : [],
        },
        rpc(ctx),
      );
      if (limit > 0) {
        ctx.set(listed.totalEstimated ? 'X-Total-Count-Estimate' : 'X-Total-Count', String(listed.total));
        if (listed.nextAfterId) ctx.set('X-Next-After-Id', listed.nextAfterId);
      }
      ctx.body = await presentDevices(deps, ctx, project.id, listed.devices);
    },
  );

  api.add(
    {
      route: 'GET /projects/:id/chip-families/',
      operationId: 'countChipFamilies',
      summary: "The chip families the project's devices report",
      description: 'Devices per reported `chip_family`, most first; an empty `chip_family` counts devices that never reported one. A build is only offered to devices of its own chip family.',
      project: 'viewer',
      responses: { 200: R.arrayOf(R.ChipFamilyCount) },
    },
    async (ctx, { project }) => {
      const { chipFamilies, estimated } = await clients.registry.countChipFamilies({ projectId: project.id }, rpc(ctx));
      ctx.body = chipFamilies.map((row) => ({ chip_family: row.chipFamily, devices: Number(row.devices), estimated }));
    },
  );

  api.add(
    {
      route: 'GET /projects/:id/reach/',
      operationId: 'countReach',
      summary: 'How many devices a set of targets reaches',
      description:
        "The devices a deployment with these `group_ids` and `channel_ids` would target now (the rules of createDeployment: any listed group, and any listed channel; none listed: every device), before it is created. The percentage is not applied.",
      project: 'viewer',
      query: reachQuery,
      responses: { 200: R.Reach },
    },
    async (ctx, { project, query }) => {
      const ids = (text: string | undefined) => (text ? text.split(',') : []);
      const { count, estimated } = await clients.registry.countDevices({ projectId: project.id, groupIds: ids(query.group_ids), channelIds: ids(query.channel_ids), atMost: 0, maxAgeMs: 0 }, rpc(ctx));
      ctx.body = { devices: Number(count), estimated };
    },
  );

  api.add(
    {
      route: 'POST /projects/:id/devices/',
      operationId: 'createDevice',
      summary: 'Pre-provision a device',
      description: "Answers the device with its per-device `token`, shown only here. Counts against the plan's device cap (400 when reached); a `device_id` already in the project is 409.",
      project: 'operator',
      body: createDeviceBody,
      responses: { 201: R.DeviceCreated },
      errors: [409],
    },
    async (ctx, { project, body }) => {
      const hardware = profileMessage(profileOf(body));
      const { device, token } = await provisionDevice(ports, callerOf(ctx), project, {
        deviceId: body.device_id,
        hardware,
        // PREVIOUS RELEASE: the same fields flat, for a registry of the release before.
        ...hardware,
        channelId: body.channel_id ?? '',
        active: body.active ?? true,
        metadata: body.metadata ?? {},
      });
      ctx.status = 201;
      ctx.body = { ...(await presentDevices(deps, ctx, project.id, [device]))[0], token: token.token };
    },
  );

  api.add(
    { route: 'GET /projects/:id/devices/:did/', operationId: 'getDevice', summary: 'Read a device', project: 'viewer', responses: { 200: R.Device } },
    async (ctx, { project }) => {
      ctx.body = (await presentDevices(deps, ctx, project.id, [await deviceFor(ctx, project.id)]))[0];
    },
  );

  api.add(
    {
      route: 'PATCH /projects/:id/devices/:did/',
      operationId: 'updateDevice',
      summary: 'Update a device',
      description: '`active: false` refuses the device updates (`device_inactive`); `channel_id` moves it to another channel; `metadata` replaces the stored object.',
      project: 'operator',
      body: updateDeviceBody,
      responses: { 200: R.Device },
    },
    async (ctx, { project, principal, body }) => {
      const { device } = await clients.registry.updateDevice(
        { projectId: project.id, id: pathId(ctx, 'did', 'device'), active: body.active, metadata: body.metadata, channelId: body.channel_id, tokenRequired: undefined },
        rpc(ctx),
      );
      await audit.record(principal, { projectId: project.id, action: 'device.updated', targetType: 'device', targetId: device!.id, details: { ...body } });
      ctx.body = (await presentDevices(deps, ctx, project.id, [device!]))[0];
    },
  );

  api.add(
    {
      route: 'DELETE /projects/:id/devices/:did/',
      operationId: 'deleteDevice',
      summary: 'Delete a device and its history',
      description: 'Removes its rollout states, lifecycle events and decision records too, and revokes its token. Prefer `active: false` to keep the history.',
      project: 'operator',
      responses: { 204: null },
    },
    async (ctx, { project }) => {
      const device = await deviceFor(ctx, project.id);
      await deleteDeviceWithHistory(ports, callerOf(ctx), project, device);
      ctx.status = 204;
    },
  );

  api.add(
    {
      route: 'POST /projects/:id/devices/:did/token/',
      operationId: 'issueDeviceToken',
      summary: "Issue or rotate a device's token",
      description: 'The raw token is shown only here. Issuing again rotates: the previous token stops working at once.',
      project: 'operator',
      responses: { 201: R.DeviceToken },
    },
    async (ctx, { project }) => {
      const device = await deviceFor(ctx, project.id);
      ctx.status = 201;
      ctx.body = await issueDeviceToken(ports, callerOf(ctx), project, device);
    },
  );

  api.add(
    {
      route: 'DELETE /projects/:id/devices/:did/token/',
      operationId: 'revokeDeviceToken',
      summary: "Revoke a device's token",
      project: 'operator',
      responses: { 204: null },
    },
    async (ctx, { project }) => {
      const device = await deviceFor(ctx, project.id);
      await revokeDeviceToken(ports, callerOf(ctx), project, device);
      ctx.status = 204;
    },
  );

  api.add(
    {
      route: 'GET /projects/:id/devices/:did/check-events/',
      operationId: 'listCheckEvents',
      summary: "List a device's OTA decisions",
      description: 'Newest first; only the newest 20 per device are kept. A check is recorded before it is answered (best effort: a failure to record does not change the answer).',
      project: 'viewer',
      query: checkEventsQuery,
      responses: { 200: R.arrayOf(R.Decision) },
    },
    async (ctx, { project, query }) => {
      const since = sinceOf(query.since);
      const device = await deviceFor(ctx, project.id);
      const { records } = await clients.registry.listCheckEvents(
        {
          projectId: project.id,
          id: device.id,
          limit: cappedLimit(query.limit, CHECK_EVENTS_LIMIT.default, CHECK_EVENTS_LIMIT.max),
          since,
          decision: query.decision ?? '',
          status: query.status ?? '',
        },
        rpc(ctx),
      );
      ctx.body = records.map(decisionJson);
    },
  );

  api.add(
    {
      route: 'GET /projects/:id/devices/:did/events/',
      operationId: 'listDeviceEvents',
      summary: "List a device's lifecycle events",
      description:
        'What the device posted to the status endpoint and had accepted, newest first, as it sent it: the first report of each status, and every `failed` (a repeated status changes nothing and is not listed again); the newest 100 per device are listed. Readable as soon as the report was answered.',
      project: 'viewer',
      query: deviceEventsQuery,
      responses: { 200: R.arrayOf(R.DeviceEvent) },
    },
    async (ctx, { project, query }) => {
      const since = sinceOf(query.since);
      const device = await deviceFor(ctx, project.id);
      const { reports } = await clients.rollout.listDeviceReports(
        { projectId: project.id, deviceUuid: device.id, limit: cappedLimit(query.limit, DEVICE_EVENTS_LIMIT.default, DEVICE_EVENTS_LIMIT.max), since },
        rpc(ctx),
      );
      ctx.body = reports.map(deviceEventJson);
    },
  );
}

/** A `since` query parameter as a date; the pattern admits the shape, a date that does not exist (month 13) is caught here. */
function sinceOf(text: string | undefined): Date | undefined {
  const since = text ? new Date(text) : undefined;
  if (since && Number.isNaN(since.getTime())) throw new ValidationFailed([{ loc: ['query', 'since'], msg: 'not a date-time that exists', type: 'format' }]);
  return since;
}
