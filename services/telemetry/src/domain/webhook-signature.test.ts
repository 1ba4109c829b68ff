import { createHmac } from 'node:crypto';
import { webhookSignature } from './webhook-signature';

test('the signature is HMAC-SHA256 over "<timestamp>.<body>", as docs/api.md tells receivers', () => {
  const body = '{"id":"d1"}';
  const expected = createHmac('sha256', 'whsec_test').update(`1700000000.${body}`).digest('hex');
  expect(webhookSignature('whsec_test', 1_700_000_000, body)).toBe(`v1=${expected}`);
});
