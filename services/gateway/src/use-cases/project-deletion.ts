import { conflict } from '@ota/errors';
import type { registry } from '@ota/proto';
import type { Caller, RegistryPort, RolloutPort, TelemetryPort, AccountStorePort } from './ports';

export interface ProjectDeletionPorts {
  rollout: RolloutPort<'countDeployments'>;
  tokens: AccountStorePort<'revokeProjectTokens' | 'deleteGrants'>;
  registry: RegistryPort<'deleteProject'>;
  telemetry: TelemetryPort<'listWebhooks' | 'deleteWebhook'>;
}

/**
 * Deletes a project: refused (409) while rollout has an active or paused deployment of it.
 * Otherwise its project and device tokens are revoked and its roles' grants deleted, registry deletes its channels, groups and
 * devices, and its webhooks go too (a deleted project has no more events to send). Artifacts stay.
 */
export async function deleteProject(ports: ProjectDeletionPorts, caller: Caller, project: registry.Project): Promise<void> {
  const { call } = caller;
  const { count } = await ports.rollout.countDeployments({ projectId: project.id, states: ['active', 'paused'], artifactId: '' }, call);
  if (count > 0) throw conflict(`the project has ${count} active or paused deployment(s); complete or cancel them first`);
  await ports.tokens.revokeProjectTokens(project.id);
  await ports.tokens.deleteGrants(project.id);
  await ports.registry.deleteProject({ projectId: project.id }, call);
  const { webhooks } = await ports.telemetry.listWebhooks({ projectId: project.id }, call);
  for (const webhook of webhooks) await ports.telemetry.deleteWebhook({ projectId: project.id, webhookId: webhook.id }, call);
}
