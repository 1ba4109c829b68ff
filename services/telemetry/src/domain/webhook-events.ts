import type { AuditRecord } from './model';

/**
 * The kinds an audit event is, most specific last: its action, and for a deployment that changed by
 * itself also `deployment.guardrail_tripped` (an automatic pause) or `deployment.stage_advanced`
 * (an automatic ramp); a deployment or release of a build that raises secure_version is also
 * `deployment.secure_version_raised`. Webhooks subscribe to kinds; the gateway names the ones they
 * may choose.
 */
export function kindsOfAudit(event: Pick<AuditRecord, 'action' | 'actorType' | 'details'>): string[] {
  const kinds = [event.action];
  if (event.actorType === 'system' && event.action === 'deployment.paused') kinds.push('deployment.guardrail_tripped');
  if (event.actorType === 'system' && event.action === 'deployment.ramped') kinds.push('deployment.stage_advanced');
  if ((event.action === 'deployment.created' || event.action === 'release.created') && event.details?.secure_version_raise) kinds.push('deployment.secure_version_raised');
  return kinds;
}
