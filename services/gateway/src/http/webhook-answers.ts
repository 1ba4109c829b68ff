// Answers about webhooks (docs/api.md, "Webhooks"): named components of the document through
// response-schemas.ts, which exports them with the rest. Their request bodies are in webhook-schemas.ts.
import { COUNT, NULLABLE_TIME, object, TIME, UUID } from './schema-building';

const webhookFields = { id: UUID, url: { type: 'string' }, events: { type: 'array', items: { type: 'string' } }, created_at: TIME };

export const Webhook = object(webhookFields);

export const WebhookCreated = object({ ...webhookFields, secret: { type: 'string', description: 'Shown in this answer only: the receiver keeps it to check `OTA-Signature`.' } });

export const WebhookDelivery = object({
  id: { type: 'string', description: 'The same on every attempt (the `OTA-Delivery-Id` header): receivers drop what they already have.' },
  event: { type: 'string' },
  audit_event_id: UUID,
  state: { type: 'string', enum: ['pending', 'delivered', 'failed'], description: '`failed`: given up after the retry window.' },
  attempts: {
    type: 'array',
    items: object({ at: TIME, status_code: { type: ['integer', 'null'] }, error: { type: 'string' }, duration_ms: COUNT }),
  },
  next_attempt_at: NULLABLE_TIME,
  created_at: TIME,
  delivered_at: NULLABLE_TIME,
  payload: { type: 'object', description: 'The JSON body every attempt sends.' },
});
