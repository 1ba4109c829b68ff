// The bodies and queries of the webhook endpoints (routes/webhooks.ts), validated as schemas.ts's are.
import { limitParameter } from './schemas';

/**
 * The event kinds a webhook may subscribe to: audit actions, two a deployment makes by itself
 * (an automatic pause is also `deployment.guardrail_tripped`, an automatic ramp also
 * `deployment.stage_advanced`), and `deployment.secure_version_raised` (a deployment or release
 * of a build that raises secure_version).
 */
export const WEBHOOK_EVENT_KINDS = [
  'deployment.created',
  'deployment.started',
  'deployment.paused',
  'deployment.resumed',
  'deployment.ramped',
  'deployment.completed',
  'deployment.cancelled',
  'deployment.guardrail_tripped',
  'deployment.stage_advanced',
  'deployment.secure_version_raised',
  'artifact.uploaded',
  'artifact.archived',
  'release.created',
] as const;

export const createWebhookBody = {
  type: 'object',
  additionalProperties: false,
  required: ['url', 'events'],
  properties: {
    url: { type: 'string', minLength: 1, maxLength: 2048, description: 'An absolute http or https URL; loopback, link-local and private destinations are refused unless the operator allows them.' },
    events: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', enum: WEBHOOK_EVENT_KINDS } },
  },
} as const;

export const WEBHOOK_DELIVERIES_LIMIT = { default: 20, max: 100 } as const;

export const webhookDeliveriesQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { limit: limitParameter(WEBHOOK_DELIVERIES_LIMIT.default, WEBHOOK_DELIVERIES_LIMIT.max) },
} as const;
