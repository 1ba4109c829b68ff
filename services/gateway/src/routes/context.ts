import { invalidArgument, notFound, permissionDenied } from '@ota/errors';
import type { registry } from '@ota/proto';
import type { Context } from 'koa';
import type { OutboundCall } from '@ota/logging';
import { principalOf, type Principal } from '../auth/principal';
import { projectRoleOf } from '../auth/project-role';
import { requireRole, roleAllows, type Role } from '../auth/roles';
import type { ProjectAccess } from '../http/operations';
import type { GatewayDeps } from '../deps';
import type { IdempotencyOptions } from '../http/idempotency';
import { deviceJson, type CheckState } from '../http/present';
import { UUID_PATTERN } from '../http/validate';
import type { Caller, UseCasePorts } from '../use-cases/ports';

/** Call options that carry the request id, and the caller's trace context, to the services. */
export function rpc(ctx: Context): OutboundCall {
  return { requestId: ctx.state.requestId as string, traceparent: ctx.state.traceparent as string | undefined };
}

/** The caller of a use case: the request's principal, and the trace its calls carry. */
export function callerOf(ctx: Context): Caller {
  return { principal: principalOf(ctx), call: rpc(ctx) };
}

/** Every port the use cases ask for, from the gateway's dependencies. */
export function useCasePorts(deps: GatewayDeps): UseCasePorts {
  const { registry, rollout, artifacts, telemetry } = deps.clients;
  return { registry, rollout, artifacts, telemetry, tokens: deps.store, users: deps.store, audit: deps.audit, patchBasesPerBuild: deps.config.PATCH_BASES_PER_BUILD };
}

/** How the Idempotency-Keys of uploads, releases and deployments are kept (docs/api.md, "Retrying an upload"). */
export function idempotencyOptions(deps: GatewayDeps): IdempotencyOptions {
  return { store: deps.idempotency, ttlSeconds: deps.config.IDEMPOTENCY_KEY_TTL_SECONDS, requestTimeoutMs: deps.config.HTTP_REQUEST_TIMEOUT_MS };
}

/** A path id that must be a UUID; anything else names nothing (404). */
export function pathId(ctx: Context, name: string, what: string): string {
  const id = ctx.params[name] as string;
  if (!UUID_PATTERN.test(id)) throw notFound(`${what} not found`);
  return id;
}

/**
 * The project in the path, if the caller holds a role there that allows `what` (docs/api.md,
 * "Roles"). A project the caller holds no role in is 404 (its existence is not revealed); a role
 * short of `needed` is 403, naming the role (staff, who read every project, are told so).
 */
export async function projectFor(deps: GatewayDeps, ctx: Context, needed: Role, what: string): Promise<ProjectAccess> {
  const principal = principalOf(ctx);
  const id = pathId(ctx, 'id', 'project');
  if (principal.token.kind === 'project' && principal.token.projectId !== id) throw notFound('project not found');
  const { project } = await deps.clients.registry.getProject({ projectId: id }, rpc(ctx));
  const held = await projectRoleOf(deps.store, principal, project!);
  if (!held) throw notFound('project not found');
  if (held.source === 'staff' && !roleAllows(held.role, needed)) throw permissionDenied('staff may read, but not change, projects they do not own');
  requireRole(held.role, needed, what);
  // The audit of what the caller does here names the role it acted with.
  principal.role = held.role;
  return { project: project!, principal, role: held.role };
}

/** Device objects as the API shows them, with `check_state`, which rollout answers from its active deployments. */
export async function presentDevices(deps: GatewayDeps, ctx: Context, projectId: string, devices: registry.Device[]) {
  if (devices.length === 0) return [];
  const { checkStates } = await deps.clients.rollout.checkStates(
    { projectId, devices: devices.map(({ id, channelId, groupIds, lastSeen, lastCheckAt }) => ({ id, channelId, groupIds, lastSeen, lastCheckAt })) },
    rpc(ctx),
  );
  return devices.map((device, index) => deviceJson(device, checkStates[index] as CheckState));
}

/** The device_id a device API request speaks for: the one it names with a project token, its own token's otherwise. */
export function deviceIdOf(principal: Principal, namedDeviceId: string | undefined): string {
  if (principal.token.kind === 'device') {
    if (namedDeviceId !== undefined && namedDeviceId !== principal.token.deviceId) throw permissionDenied('this device token belongs to another device');
    return principal.token.deviceId;
  }
  if (namedDeviceId === undefined) throw invalidArgument('device_id is required with a project token');
  return namedDeviceId;
}
