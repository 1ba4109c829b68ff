import { createHmac } from 'node:crypto';

/**
 * The signature of one delivery attempt: HMAC-SHA256 with the webhook's secret over
 * `<timestamp>.<body>`, hex, sent as `OTA-Signature: v1=<hex>` with `OTA-Timestamp: <timestamp>`
 * (Unix seconds). docs/api.md shows a receiver checking it.
 */
export function webhookSignature(secret: string, timestamp: number, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

