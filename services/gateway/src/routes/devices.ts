import { notFound } from '@ota/errors';
import type { registry } from '@ota/proto';
import type { Context } from 'koa';
import type { Principal } from '../auth/principal';
import type { GatewayDeps } from '../deps';
import type { OperationTable } from '../http/operations';
import { channelJson, decisionJson, deviceEventJson, deviceJson, groupJson, type CheckState } from '../http/present';
import * as R from '../http/response-schemas';
import {
  addMemberBody,
  checkEventsQuery,
  cappedLimit,
  CHECK_EVENTS_LIMIT,
  DEVICE_EVENTS_LIMIT,
  deviceEventsQuery,
  createChannelBody,
  createDeviceBody,
  createGroupBody,
  listDevicesQuery,
  updateDeviceBody,
  type CheckEventsQuery,
  type CreateDeviceBody,
  type ListDevicesQuery,
  type UpdateDeviceBody,
} from '../http/schemas';
import { ValidationFailed } from '../http/errors';
import { parseBody, parseQuery } from '../http/validate';
import { pathId, projectFor, rpc } from './context';

export function deviceRoutes(table: OperationTable, deps: GatewayDeps): void {
  const { clients, store, audit } = deps;

  /** Device objects with check_state, which rollout answers from its active deployments. */
  async function present(ctx: Context, projectId: string, devices: registry.Device[]) {
    if (devices.length === 0) return [];
    const { checkStates } = await clients.rollout.checkStates(
      { projectId, devices: devices.map(({ id, channelId, groupIds, lastSeen, lastCheckAt }) => ({ id, channelId, groupIds, lastSeen, lastCheckAt })) },
      rpc(ctx),
    );
    return devices.map((device, index) => deviceJson(device, checkStates[index] as CheckState));
  }

  async function issueDeviceToken(ctx: Context, principal: Principal, project: registry.Project, device: registry.Device) {
    // Issuing again rotates: the old token stops working at once.
    await store.revokeDeviceTokens(device.id);
    if (!device.tokenRequired) await setTokenRequired(ctx, project.id, device.id, true);
    const { token, raw } = await store.createToken({
      kind: 'device',
      scope: '',
      name: `device ${device.deviceId}`,
      userId: project.ownerId,
      projectId: project.id,
      deviceUuid: device.id,
      deviceId: device.deviceId,
    });
    await audit.record(principal, {
      projectId: project.id,
      action: 'device_token.issued',
      targetType: 'device',
      targetId: device.id,
      details: { prefix: token.prefix },
    });
    return { token: raw, prefix: token.prefix, created_at: token.created_at.toISOString() };
  }

  async function setTokenRequired(ctx: Context, projectId: string, id: string, tokenRequired: boolean) {
    await clients.registry.updateDevice({ projectId, id, active: undefined, metadata: undefined, channelId: undefined, tokenRequired }, rpc(ctx));
  }

  table.add(
    {
      method: 'get',
      path: '/projects/:id/devices/',
      operationId: 'listDevices',
      summary: 'List devices',
      description: 'Filters combine: with both `group_id` and `channel_id` a device must match both. An unknown id gives an empty list.',
      tag: 'Devices',
      access: 'developer',
      query: listDevicesQuery,
      responses: { 200: R.arrayOf(R.Device) },
    },
    async (ctx) => {
      const { project } = await projectFor(deps, ctx, 'read');
      const query = parseQuery<ListDevicesQuery>(listDevicesQuery, { ...ctx.query });
      const { devices } = await clients.registry.listDevices(
        {
          projectId: project.id,
          active: query.active === undefined ? undefined : query.active === 'true',
          groupId: query.group_id ?? '',
          channelId: query.channel_id ?? '',
        },
        rpc(ctx),
      );
      ctx.body = await present(ctx, project.id, devices);
    },
  );

  table.add(
    {
      method: 'post',
      path: '/projects/:id/devices/',
      operationId: 'createDevice',
      summary: 'Pre-provision a device',
      description: "Answers the device with its per-device `token`, shown only here. Counts against the plan's device cap (400 when reached); a `device_id` already in the project is 409.",
      tag: 'Devices',
      access: 'developer',
      body: createDeviceBody,
      responses: { 201: R.DeviceCreated },
      errors: [409],
    },
    async (ctx) => {
      const { project, principal } = await projectFor(deps, ctx, 'write');
      const body = parseBody<CreateDeviceBody>(createDeviceBody, ctx.request.body);
      const owner = await store.findUser(project.ownerId);
      const { device } = await clients.registry.createDevice(
        {
          projectId: project.id,
          ownerId: project.ownerId,
          maxDevices: owner?.plan.max_devices ?? 0,
          deviceId: body.device_id,
          framework: body.framework ?? '',
          chipFamily: body.chip_family ?? '',
          boardId: body.board_id ?? '',
          hardwareRevision: body.hardware_revision ?? '',
          partitionProfile: body.partition_profile ?? '',
          nvsSchemaVersion: body.nvs_schema_version,
          securityMode: body.security_mode ?? '',
          channelId: body.channel_id ?? '',
          active: body.active ?? true,
          metadata: body.metadata ?? {},
          // It gets its own token below: from now on the shared project token may not speak for it.
          tokenRequired: true,
        },
        rpc(ctx),
      );
      await audit.record(principal, {
        projectId: project.id,
        action: 'device.created',
        targetType: 'device',
        targetId: device!.id,
        details: { device_id: device!.deviceId },
      });
      const issued = await issueDeviceToken(ctx, principal, project, device!);
      ctx.status = 201;
      ctx.body = { ...(await present(ctx, project.id, [device!]))[0], token: issued.token };
    },
  );

  table.add(
    { method: 'get', path: '/projects/:id/devices/:did/', operationId: 'getDevice', summary: 'Read a device', tag: 'Devices', access: 'developer', responses: { 200: R.Device } },
    async (ctx) => {
      const { project } = await projectFor(deps, ctx, 'read');
      const { device } = await clients.registry.getDevice({ projectId: project.id, id: pathId(ctx, 'did', 'device'), deviceId: '' }, rpc(ctx));
      ctx.body = (await present(ctx, project.id, [device!]))[0];
    },
  );

  table.add(
    {
      method: 'patch',
      path: '/projects/:id/devices/:did/',
      operationId: 'updateDevice',
      summary: 'Update a device',
      description: '`active: false` refuses the device updates (`device_inactive`); `channel_id` moves it to another channel; `metadata` replaces the stored object.',
      tag: 'Devices',
      access: 'developer',
      body: updateDeviceBody,
      responses: { 200: R.Device },
    },
    async (ctx) => {
      const { project, principal } = await projectFor(deps, ctx, 'write');
      const body = parseBody<UpdateDeviceBody>(updateDeviceBody, ctx.request.body);
      const { device } = await clients.registry.updateDevice(
        { projectId: project.id, id: pathId(ctx, 'did', 'device'), active: body.active, metadata: body.metadata, channelId: body.channel_id, tokenRequired: undefined },
        rpc(ctx),
      );
      await audit.record(principal, { projectId: project.id, action: 'device.updated', targetType: 'device', targetId: device!.id, details: { ...body } });
      ctx.body = (await present(ctx, project.id, [device!]))[0];
    },
  );

  table.add(
    {
      method: 'delete',
      path: '/projects/:id/devices/:did/',
      operationId: 'deleteDevice',
      summary: 'Delete a device and its history',
      description: 'Removes its rollout states, lifecycle events and decision records too, and revokes its token. Prefer `active: false` to keep the history.',
      tag: 'Devices',
      access: 'developer',
      responses: { 204: null },
    },
    async (ctx) => {
      const { project, principal } = await projectFor(deps, ctx, 'write');
      const { device } = await clients.registry.getDevice({ projectId: project.id, id: pathId(ctx, 'did', 'device'), deviceId: '' }, rpc(ctx));
      // History first and the record last: every step is safe to repeat if the call is retried.
      await store.revokeDeviceTokens(device!.id);
      await clients.rollout.deleteDeviceStates({ projectId: project.id, deviceId: device!.id }, rpc(ctx));
      await clients.registry.deleteDevice({ projectId: project.id, ownerId: project.ownerId, id: device!.id }, rpc(ctx));
      await audit.record(principal, { projectId: project.id, action: 'device.deleted', targetType: 'device', targetId: device!.id, details: { device_id: device!.deviceId } });
      ctx.status = 204;
    },
  );

  table.add(
    {
      method: 'post',
      path: '/projects/:id/devices/:did/token/',
      operationId: 'issueDeviceToken',
      summary: "Issue or rotate a device's token",
      description: 'The raw token is shown only here. Issuing again rotates: the previous token stops working at once.',
      tag: 'Devices',
      access: 'developer',
      responses: { 201: R.DeviceToken },
    },
    async (ctx) => {
      const { project, principal } = await projectFor(deps, ctx, 'write');
      const { device } = await clients.registry.getDevice({ projectId: project.id, id: pathId(ctx, 'did', 'device'), deviceId: '' }, rpc(ctx));
      ctx.status = 201;
      ctx.body = await issueDeviceToken(ctx, principal, project, device!);
    },
  );

  table.add(
    {
      method: 'delete',
      path: '/projects/:id/devices/:did/token/',
      operationId: 'revokeDeviceToken',
      summary: "Revoke a device's token",
      tag: 'Devices',
      access: 'developer',
      responses: { 204: null },
    },
    async (ctx) => {
      const { project, principal } = await projectFor(deps, ctx, 'write');
      const { device } = await clients.registry.getDevice({ projectId: project.id, id: pathId(ctx, 'did', 'device'), deviceId: '' }, rpc(ctx));
      await store.revokeDeviceTokens(device!.id);
      // Without a token of its own, the device may use the shared project token again.
      await setTokenRequired(ctx, project.id, device!.id, false);
      await audit.record(principal, { projectId: project.id, action: 'device_token.revoked', targetType: 'device', targetId: device!.id });
      ctx.status = 204;
    },
  );

  table.add(
    {
      method: 'get',
      path: '/projects/:id/devices/:did/check-events/',
      operationId: 'listCheckEvents',
      summary: "List a device's OTA decisions",
      description: 'Newest first; only the newest 20 per device are kept. A check is recorded before it is answered (best effort: a failure to record does not change the answer).',
      tag: 'Devices',
      access: 'developer',
      query: checkEventsQuery,
      responses: { 200: R.arrayOf(R.Decision) },
    },
    async (ctx) => {
      const { project } = await projectFor(deps, ctx, 'read');
      const query = parseQuery<CheckEventsQuery>(checkEventsQuery, { ...ctx.query });
      const since = sinceOf(query.since);
      const { device } = await clients.registry.getDevice({ projectId: project.id, id: pathId(ctx, 'did', 'device'), deviceId: '' }, rpc(ctx));
      const { events } = await clients.registry.listCheckEvents(
        {
          projectId: project.id,
          id: device!.id,
          limit: cappedLimit(query.limit, CHECK_EVENTS_LIMIT.default, CHECK_EVENTS_LIMIT.max),
          since,
          decision: query.decision ?? '',
          status: query.status ?? '',
        },
        rpc(ctx),
      );
      ctx.body = events.map(decisionJson);
    },
  );

  table.add(
    {
      method: 'get',
      path: '/projects/:id/devices/:did/events/',
      operationId: 'listDeviceEvents',
      summary: "List a device's lifecycle events",
      description:
        'What the device posted to the status endpoint and had accepted, newest first, as it sent it (a resent event appears again); the newest 100 per device are kept. Readable as soon as the report was answered.',
      tag: 'Devices',
      access: 'developer',
      query: deviceEventsQuery,
      responses: { 200: R.arrayOf(R.DeviceEvent) },
    },
    async (ctx) => {
      const { project } = await projectFor(deps, ctx, 'read');
      const query = parseQuery<{ limit?: string; since?: string }>(deviceEventsQuery, { ...ctx.query });
      const since = sinceOf(query.since);
      const { device } = await clients.registry.getDevice({ projectId: project.id, id: pathId(ctx, 'did', 'device'), deviceId: '' }, rpc(ctx));
      const { reports } = await clients.rollout.listDeviceReports(
        { projectId: project.id, deviceId: device!.id, limit: cappedLimit(query.limit, DEVICE_EVENTS_LIMIT.default, DEVICE_EVENTS_LIMIT.max), since },
        rpc(ctx),
      );
      ctx.body = reports.map(deviceEventJson);
    },
  );

  table.add(
    { method: 'get', path: '/projects/:id/groups/', operationId: 'listGroups', summary: 'List groups', tag: 'Groups and channels', access: 'developer', responses: { 200: R.arrayOf(R.Group) } },
    async (ctx) => {
      const { project } = await projectFor(deps, ctx, 'read');
      ctx.body = (await clients.registry.listGroups({ projectId: project.id }, rpc(ctx))).groups.map(groupJson);
    },
  );

  table.add(
    {
      method: 'post',
      path: '/projects/:id/groups/',
      operationId: 'createGroup',
      summary: 'Create a group',
      description: 'A name already used in the project is 409.',
      tag: 'Groups and channels',
      access: 'developer',
      body: createGroupBody,
      responses: { 201: R.Group },
      errors: [409],
    },
    async (ctx) => {
      const { project, principal } = await projectFor(deps, ctx, 'write');
      const body = parseBody<{ name: string }>(createGroupBody, ctx.request.body);
      const { group } = await clients.registry.createGroup({ projectId: project.id, name: body.name }, rpc(ctx));
      await audit.record(principal, { projectId: project.id, action: 'group.created', targetType: 'group', targetId: group!.id, details: { name: body.name } });
      ctx.status = 201;
      ctx.body = groupJson(group!);
    },
  );

  table.add(
    {
      method: 'get',
      path: '/projects/:id/groups/:gid/members/',
      operationId: 'listGroupMembers',
      summary: "List a group's devices",
      tag: 'Groups and channels',
      access: 'developer',
      responses: { 200: R.arrayOf(R.Device) },
    },
    async (ctx) => {
      const { project } = await projectFor(deps, ctx, 'read');
      const groupId = pathId(ctx, 'gid', 'group');
      const { groups } = await clients.registry.listGroups({ projectId: project.id }, rpc(ctx));
      if (!groups.some((group) => group.id === groupId)) throw notFound('group not found');
      const { devices } = await clients.registry.listDevices({ projectId: project.id, active: undefined, groupId, channelId: '' }, rpc(ctx));
      ctx.body = await present(ctx, project.id, devices);
    },
  );

  table.add(
    {
      method: 'post',
      path: '/projects/:id/groups/:gid/members/',
      operationId: 'addGroupMember',
      summary: 'Add a device to a group',
      description: 'Adding a member twice is not an error. Answers the device.',
      tag: 'Groups and channels',
      access: 'developer',
      body: addMemberBody,
      responses: { 201: R.Device },
    },
    async (ctx) => {
      const { project, principal } = await projectFor(deps, ctx, 'write');
      const groupId = pathId(ctx, 'gid', 'group');
      const body = parseBody<{ device_id: string }>(addMemberBody, ctx.request.body);
      const { device } = await clients.registry.addGroupMember({ projectId: project.id, groupId, deviceId: body.device_id }, rpc(ctx));
      await audit.record(principal, { projectId: project.id, action: 'group.member_added', targetType: 'group', targetId: groupId, details: { device_id: body.device_id } });
      ctx.status = 201;
      ctx.body = (await present(ctx, project.id, [device!]))[0];
    },
  );

  table.add(
    {
      method: 'delete',
      path: '/projects/:id/groups/:gid/members/:did/',
      operationId: 'removeGroupMember',
      summary: 'Remove a device from a group',
      tag: 'Groups and channels',
      access: 'developer',
      responses: { 204: null },
    },
    async (ctx) => {
      const { project, principal } = await projectFor(deps, ctx, 'write');
      const groupId = pathId(ctx, 'gid', 'group');
      const deviceId = pathId(ctx, 'did', 'device');
      await clients.registry.removeGroupMember({ projectId: project.id, groupId, deviceId }, rpc(ctx));
      await audit.record(principal, { projectId: project.id, action: 'group.member_removed', targetType: 'group', targetId: groupId, details: { device_id: deviceId } });
      ctx.status = 204;
    },
  );

  table.add(
    {
      method: 'get',
      path: '/projects/:id/channels/',
      operationId: 'listChannels',
      summary: 'List channels',
      description: 'The only way to learn a channel id. The default channel, `stable`, has `is_default: true`.',
      tag: 'Groups and channels',
      access: 'developer',
      responses: { 200: R.arrayOf(R.Channel) },
    },
    async (ctx) => {
      const { project } = await projectFor(deps, ctx, 'read');
      ctx.body = (await clients.registry.listChannels({ projectId: project.id }, rpc(ctx))).channels.map(channelJson);
    },
  );

  table.add(
    {
      method: 'post',
      path: '/projects/:id/channels/',
      operationId: 'createChannel',
      summary: 'Create a channel',
      description: 'A name already used in the project is 409.',
      tag: 'Groups and channels',
      access: 'developer',
      body: createChannelBody,
      responses: { 201: R.Channel },
      errors: [409],
    },
    async (ctx) => {
      const { project, principal } = await projectFor(deps, ctx, 'write');
      const body = parseBody<{ name: string }>(createChannelBody, ctx.request.body);
      const { channel } = await clients.registry.createChannel({ projectId: project.id, name: body.name }, rpc(ctx));
      await audit.record(principal, { projectId: project.id, action: 'channel.created', targetType: 'channel', targetId: channel!.id, details: { name: body.name } });
      ctx.status = 201;
      ctx.body = channelJson(channel!);
    },
  );
}

/** A `since` query parameter as a date; the pattern admits the shape, a date that does not exist (month 13) is caught here. */
function sinceOf(text: string | undefined): Date | undefined {
  const since = text ? new Date(text) : undefined;
  if (since && Number.isNaN(since.getTime())) throw new ValidationFailed([{ loc: ['query', 'since'], msg: 'not a date-time that exists', type: 'format' }]);
  return since;
}
