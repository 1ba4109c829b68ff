import { notFound } from '@ota/errors';
import type { GatewayDeps } from '../deps';
import type { OperationTable } from '../http/operations';
import { channelJson, groupJson } from '../http/present';
import * as R from '../http/response-schemas';
import { addMemberBody, createChannelBody, createGroupBody } from '../http/schemas';
import { pathId, presentDevices, rpc } from './context';

/** Groups, their members, and channels: registry's ways of sorting a fleet for targeting. */
export function groupAndChannelRoutes(table: OperationTable, deps: GatewayDeps): void {
  const api = table.section({ tag: 'Groups and channels', access: 'developer' });
  const { clients, audit } = deps;

  api.add(
    { route: 'GET /projects/:id/groups/', operationId: 'listGroups', summary: 'List groups', project: 'read', responses: { 200: R.arrayOf(R.Group) } },
    async (ctx, { project }) => {
      ctx.body = (await clients.registry.listGroups({ projectId: project.id }, rpc(ctx))).groups.map(groupJson);
    },
  );

  api.add(
    {
      route: 'POST /projects/:id/groups/',
      operationId: 'createGroup',
      summary: 'Create a group',
      description: 'A name already used in the project is 409.',
      project: 'write',
      body: createGroupBody,
      responses: { 201: R.Group },
      errors: [409],
    },
    async (ctx, { project, principal, body }) => {
      const { group } = await clients.registry.createGroup({ projectId: project.id, name: body.name }, rpc(ctx));
      await audit.record(principal, { projectId: project.id, action: 'group.created', targetType: 'group', targetId: group!.id, details: { name: body.name } });
      ctx.status = 201;
      ctx.body = groupJson(group!);
    },
  );

  api.add(
    {
      route: 'GET /projects/:id/groups/:gid/members/',
      operationId: 'listGroupMembers',
      summary: "List a group's devices",
      project: 'read',
      responses: { 200: R.arrayOf(R.Device) },
    },
    async (ctx, { project }) => {
      const groupId = pathId(ctx, 'gid', 'group');
      const { groups } = await clients.registry.listGroups({ projectId: project.id }, rpc(ctx));
      if (!groups.some((group) => group.id === groupId)) throw notFound('group not found');
      const { devices } = await clients.registry.listDevices({ projectId: project.id, active: undefined, groupId, channelId: '' }, rpc(ctx));
      ctx.body = await presentDevices(deps, ctx, project.id, devices);
    },
  );

  api.add(
    {
      route: 'POST /projects/:id/groups/:gid/members/',
      operationId: 'addGroupMember',
      summary: 'Add a device to a group',
      description: 'Adding a member twice is not an error. Answers the device.',
      project: 'write',
      body: addMemberBody,
      responses: { 201: R.Device },
    },
    async (ctx, { project, principal, body }) => {
      const groupId = pathId(ctx, 'gid', 'group');
      const { device } = await clients.registry.addGroupMember({ projectId: project.id, groupId, deviceId: body.device_id }, rpc(ctx));
      await audit.record(principal, { projectId: project.id, action: 'group.member_added', targetType: 'group', targetId: groupId, details: { device_id: body.device_id } });
      ctx.status = 201;
      ctx.body = (await presentDevices(deps, ctx, project.id, [device!]))[0];
    },
  );

  api.add(
    {
      route: 'DELETE /projects/:id/groups/:gid/members/:did/',
      operationId: 'removeGroupMember',
      summary: 'Remove a device from a group',
      project: 'write',
      responses: { 204: null },
    },
    async (ctx, { project, principal }) => {
      const groupId = pathId(ctx, 'gid', 'group');
      const deviceId = pathId(ctx, 'did', 'device');
      await clients.registry.removeGroupMember({ projectId: project.id, groupId, deviceId }, rpc(ctx));
      await audit.record(principal, { projectId: project.id, action: 'group.member_removed', targetType: 'group', targetId: groupId, details: { device_id: deviceId } });
      ctx.status = 204;
    },
  );

  api.add(
    {
      route: 'GET /projects/:id/channels/',
      operationId: 'listChannels',
      summary: 'List channels',
      description: 'The only way to learn a channel id. The default channel, `stable`, has `is_default: true`.',
      project: 'read',
      responses: { 200: R.arrayOf(R.Channel) },
    },
    async (ctx, { project }) => {
      ctx.body = (await clients.registry.listChannels({ projectId: project.id }, rpc(ctx))).channels.map(channelJson);
    },
  );

  api.add(
    {
      route: 'POST /projects/:id/channels/',
      operationId: 'createChannel',
      summary: 'Create a channel',
      description: 'A name already used in the project is 409.',
      project: 'write',
      body: createChannelBody,
      responses: { 201: R.Channel },
      errors: [409],
    },
    async (ctx, { project, principal, body }) => {
      const { channel } = await clients.registry.createChannel({ projectId: project.id, name: body.name }, rpc(ctx));
      await audit.record(principal, { projectId: project.id, action: 'channel.created', targetType: 'channel', targetId: channel!.id, details: { name: body.name } });
      ctx.status = 201;
      ctx.body = channelJson(channel!);
    },
  );
}
