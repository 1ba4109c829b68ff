import type { AuditRecord } from './model';

/**
 * The kinds an audit event is, most specific last: its action, and for a deployment that changed by
 * itself also `deployment.guardrail_tripped` (an automatic pause) or `deployment.stage_advanced`
 * (an automatic ramp). Webhooks subscribe to kinds; the gateway names the ones they may choose.
 */
export function kindsOfAudit(event: Pick<AuditRecord, 'action' | 'actorType'>): string[] {
  const kinds = [event.action];
  if (event.actorType === 'system' && event.action === 'deployment.paused') kinds.push('deployment.guardrail_tripped');
  if (event.actorType === 'system' && event.action === 'deployment.ramped') kinds.push('deployment.stage_advanced');
  return kinds;
}
