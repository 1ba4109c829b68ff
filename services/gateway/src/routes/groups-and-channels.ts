import { conflict, notFound } from '@ota/errors';
import type { Context } from 'koa';
import type { registry, rollout } from '@ota/proto';
import { auditActorOf, type Principal } from '../auth/principal';
import type { GatewayDeps } from '../deps';
import type { OperationTable } from '../http/operations';
import { channelJson, groupJson, membershipChangeJson } from '../http/present';
import * as R from '../http/response-schemas';
import { addMemberBody, changeMembersBody, createChannelBody, createGroupBody, membershipChangeBody, renameBody } from '../http/schemas';
import { callerOf, pathId, presentDevices, rpc, useCasePorts } from './context';
import { readMembershipImpact } from '../use-cases/membership-impact';
import { retireTarget } from '../use-cases/target-retirement';

/** Groups, their members, and channels: registry's ways of sorting a fleet for targeting. */
export function groupAndChannelRoutes(table: OperationTable, deps: GatewayDeps): void {
  const api = table.section({ tag: 'Groups and channels', access: 'developer' });
  const { clients, audit } = deps;

  /**
   * Deletes a group or channel behind rollout's fence against new deployments targeting it
   * (use-cases/target-retirement.ts): 409 while an unfinished deployment targets it, which would
   * go on naming it and reach other devices than the ones it was created for.
   */
  function deleteUntargeted(ctx: Context, projectId: string, kind: 'group' | 'channel', id: string, name: string, remove: () => Promise<unknown>): Promise<unknown> {
    const refusal = (targeting: readonly rollout.Deployment[]) => {
      const builds = targeting.map((deployment) => `build ${deployment.buildNumber} (${deployment.state})`).join(', ');
      return conflict(`${kind} "${name}" is targeted by ${targeting.length === 1 ? 'a deployment' : `${targeting.length} deployments`} not yet completed or cancelled: ${builds}`);
    };
    return retireTarget({ rollout: clients.rollout }, { projectId, kind, id }, refusal, remove, rpc(ctx));
  }

  // A group or channel is read from its project's list, which carries its count.
  async function groupOf(ctx: Context, projectId: string): Promise<registry.Group> {
    return named('group', (await clients.registry.listGroups({ projectId }, rpc(ctx))).groups, pathId(ctx, 'gid', 'group'));
  }

  async function channelOf(ctx: Context, projectId: string): Promise<registry.Channel> {
    return named('channel', (await clients.registry.listChannels({ projectId }, rpc(ctx))).channels, pathId(ctx, 'cid', 'channel'));
  }

  /** A rename of a group or channel, audited with the name it had; answers it as it is now. */
  async function renamed<T extends { id: string; name: string }>(ctx: Context, kind: 'group' | 'channel', projectId: string, principal: Principal, name: string, find: () => Promise<T>, rename: (id: string) => Promise<unknown>): Promise<T> {
    const before = await find();
    await rename(before.id);
    await audit.record(principal, { projectId, action: `${kind}.renamed`, targetType: kind, targetId: before.id, details: { from: before.name, name } });
    return find();
  }

  api.add(
    { route: 'GET /projects/:id/groups/', operationId: 'listGroups', summary: 'List groups', project: 'viewer', responses: { 200: R.arrayOf(R.Group) } },
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
      project: 'operator',
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
      route: 'PATCH /projects/:id/groups/:gid/',
      operationId: 'renameGroup',
      summary: 'Rename a group',
      description: 'A name already used in the project is 409. Deployments name groups by id, so they keep their targets.',
      project: 'operator',
      body: renameBody,
      responses: { 200: R.Group },
      errors: [409],
    },
    async (ctx, { project, principal, body }) => {
      const group = await renamed(ctx, 'group', project.id, principal, body.name, () => groupOf(ctx, project.id), (groupId) => clients.registry.renameGroup({ projectId: project.id, groupId, name: body.name }, rpc(ctx)));
      ctx.body = groupJson(group);
    },
  );

  api.add(
    {
      route: 'DELETE /projects/:id/groups/:gid/',
      operationId: 'deleteGroup',
      summary: 'Delete a group',
      description: 'Its devices stay, outside it. A group that a draft, active or paused deployment targets is 409.',
      project: 'operator',
      responses: { 204: null },
      errors: [409],
    },
    async (ctx, { project, principal }) => {
      const group = await groupOf(ctx, project.id);
      await deleteUntargeted(ctx, project.id, 'group', group.id, group.name, () => clients.registry.deleteGroup({ projectId: project.id, groupId: group.id }, rpc(ctx)));
      await audit.record(principal, { projectId: project.id, action: 'group.deleted', targetType: 'group', targetId: group.id, details: { name: group.name, members: Number(group.memberCount) } });
      ctx.status = 204;
    },
  );

  api.add(
    {
      route: 'POST /projects/:id/groups/:gid/members/changes/',
      operationId: 'changeGroupMembers',
      summary: 'Add and remove many devices at once',
      description: 'Adds the devices of `add` and removes those of `remove` (device UUIDs, at most 1000 each). Ids that name no device of the project are answered in `missing_device_ids`; the others are changed.',
      project: 'operator',
      body: changeMembersBody,
      responses: { 200: R.GroupMembersChanged },
    },
    async (ctx, { project, principal, body }) => {
      const groupId = pathId(ctx, 'gid', 'group');
      const changed = await clients.registry.changeGroupMembers({ projectId: project.id, groupId, addDeviceUuids: body.add ?? [], removeDeviceUuids: body.remove ?? [] }, rpc(ctx));
      await audit.record(principal, {
        projectId: project.id,
        action: 'group.members_changed',
        targetType: 'group',
        targetId: groupId,
        details: { added: Number(changed.added), removed: Number(changed.removed), device_ids_added: body.add ?? [], device_ids_removed: body.remove ?? [] },
      });
      ctx.body = { added: Number(changed.added), removed: Number(changed.removed), missing_device_ids: changed.missingDeviceUuids };
    },
  );

  api.add(
    {
      route: 'POST /projects/:id/groups/:gid/members/bulk-changes/',
      operationId: 'startMembershipChange',
      summary: 'Add or remove every device that matches a selection',
      description:
        'One operation for any number of devices (docs/api.md, "Bulk group changes"): `add` puts every device that matches `matching` into the group, `remove` takes every matching member out of it. Answers 202 with the change as it starts; it goes on in registry, and `GET` its `Location` to follow its progress. When it ends, one audit event (`group.members_changed`) says what it changed. Devices that come to match while it runs may or may not be changed.',
      project: 'operator',
      body: membershipChangeBody,
      responses: { 202: R.MembershipChange },
      errors: [404],
    },
    async (ctx, { project, principal, body }) => {
      const groupId = pathId(ctx, 'gid', 'group');
      const matching = body.matching;
      const change = await clients.registry.startMembershipChange(
        {
          projectId: project.id,
          groupId,
          action: body.action,
          matching: { active: matching.active, groupId: matching.group_id ?? '', channelId: matching.channel_id ?? '', chipFamily: matching.chip_family ?? '', search: matching.search ?? '' },
          actor: auditActorOf(principal),
        },
        rpc(ctx),
      );
      ctx.status = 202;
      ctx.set('Location', `/api/v1/projects/${project.id}/groups/${groupId}/members/bulk-changes/${change.id}/`);
      ctx.body = membershipChangeJson(change);
    },
  );

  api.add(
    {
      route: 'GET /projects/:id/groups/:gid/members/bulk-changes/:bid/',
      operationId: 'getMembershipChange',
      summary: 'Follow a bulk group change',
      project: 'viewer',
      responses: { 200: R.MembershipChange },
      errors: [404],
    },
    async (ctx, { project }) => {
      const change = await clients.registry.getMembershipChange({ projectId: project.id, groupId: pathId(ctx, 'gid', 'group'), changeId: pathId(ctx, 'bid', 'membership change') }, rpc(ctx));
      ctx.body = membershipChangeJson(change);
    },
  );

  api.add(
    {
      route: 'POST /projects/:id/groups/:gid/members/changes/impact/',
      operationId: 'groupMembersChangeImpact',
      summary: 'What a bulk change would do to rollouts',
      description:
        'Takes the body of a bulk change and changes nothing: for each active or paused deployment that targets the group, how many devices it would gain and lose. Asked before a change, so it needs what the change needs (write access).',
      project: 'operator',
      body: changeMembersBody,
      responses: { 200: R.MembershipImpact },
    },
    async (ctx, { project, body }) => {
      const group = await groupOf(ctx, project.id);
      const impact = await readMembershipImpact(useCasePorts(deps), callerOf(ctx), project.id, { groupId: group.id, add: body.add ?? [], remove: body.remove ?? [] });
      ctx.body = {
        group: { id: group.id, name: group.name },
        deployments: impact.map(({ deployment, gains, gainsOnEarlierBuilds, loses }) => ({
          id: deployment.id,
          build_number: deployment.buildNumber,
          version_label: deployment.versionLabel,
          state: deployment.state,
          rollout_percentage: deployment.rolloutPercentage,
          gains,
          gains_on_earlier_builds: gainsOnEarlierBuilds,
          loses,
        })),
      };
    },
  );

  api.add(
    {
      route: 'GET /projects/:id/groups/:gid/members/',
      operationId: 'listGroupMembers',
      summary: "List a group's devices",
      project: 'viewer',
      responses: { 200: R.arrayOf(R.Device) },
    },
    async (ctx, { project }) => {
      const groupId = (await groupOf(ctx, project.id)).id;
      const { devices } = await clients.registry.listDevices(
        { projectId: project.id, active: undefined, groupId, channelId: '', search: '', chipFamily: '', limit: 0, afterDeviceId: '', afterId: '', deviceId: '', ids: [] },
        rpc(ctx),
      );
      ctx.body = await presentDevices(deps, ctx, project.id, devices);
    },
  );

  api.add(
    {
      route: 'POST /projects/:id/groups/:gid/members/',
      operationId: 'addGroupMember',
      summary: 'Add a device to a group',
      description: 'Adding a member twice is not an error. Answers the device.',
      project: 'operator',
      body: addMemberBody,
      responses: { 201: R.Device },
    },
    async (ctx, { project, principal, body }) => {
      const groupId = pathId(ctx, 'gid', 'group');
      const { device } = await clients.registry.addGroupMember({ projectId: project.id, groupId, deviceUuid: body.device_id }, rpc(ctx));
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
      project: 'operator',
      responses: { 204: null },
    },
    async (ctx, { project, principal }) => {
      const groupId = pathId(ctx, 'gid', 'group');
      const deviceUuid = pathId(ctx, 'did', 'device');
      await clients.registry.removeGroupMember({ projectId: project.id, groupId, deviceUuid }, rpc(ctx));
      await audit.record(principal, { projectId: project.id, action: 'group.member_removed', targetType: 'group', targetId: groupId, details: { device_id: deviceUuid } });
      ctx.status = 204;
    },
  );

  api.add(
    {
      route: 'GET /projects/:id/channels/',
      operationId: 'listChannels',
      summary: 'List channels',
      description: 'The only way to learn a channel id. The default channel, `stable`, has `is_default: true`.',
      project: 'viewer',
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
      project: 'operator',
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

  api.add(
    {
      route: 'PATCH /projects/:id/channels/:cid/',
      operationId: 'renameChannel',
      summary: 'Rename a channel',
      description: 'A name already used in the project is 409. Devices and deployments name channels by id, so they stay on it.',
      project: 'operator',
      body: renameBody,
      responses: { 200: R.Channel },
      errors: [409],
    },
    async (ctx, { project, principal, body }) => {
      const channel = await renamed(ctx, 'channel', project.id, principal, body.name, () => channelOf(ctx, project.id), (channelId) => clients.registry.renameChannel({ projectId: project.id, channelId, name: body.name }, rpc(ctx)));
      ctx.body = channelJson(channel);
    },
  );

  api.add(
    {
      route: 'DELETE /projects/:id/channels/:cid/',
      operationId: 'deleteChannel',
      summary: 'Delete a channel',
      description:
        'Every device is on one channel and new devices land on the default: the default channel, a channel with devices (move them first), and a channel that a draft, active or paused deployment targets are 409.',
      project: 'operator',
      responses: { 204: null },
      errors: [409],
    },
    async (ctx, { project, principal }) => {
      const channel = await channelOf(ctx, project.id);
      await deleteUntargeted(ctx, project.id, 'channel', channel.id, channel.name, () => clients.registry.deleteChannel({ projectId: project.id, channelId: channel.id }, rpc(ctx)));
      await audit.record(principal, { projectId: project.id, action: 'channel.deleted', targetType: 'channel', targetId: channel.id, details: { name: channel.name } });
      ctx.status = 204;
    },
  );
}

/** The group or channel `id` of the list, or 404. */
function named<T extends { id: string }>(kind: 'group' | 'channel', items: readonly T[], id: string): T {
  const found = items.find((item) => item.id === id);
  if (!found) throw notFound(`${kind} not found`);
  return found;
}
