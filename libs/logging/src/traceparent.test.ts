import { logFieldsOf, traceparentFrom } from './index';

// W3C Trace Context (https://www.w3.org/TR/trace-context/#traceparent-header): what the gateway
// accepts and passes on, and what it drops.
const VALID = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

it('accepts a well-formed traceparent, in any case, and a later version with more fields', () => {
  expect(traceparentFrom(VALID)).toBe(VALID);
  expect(traceparentFrom(VALID.toUpperCase())).toBe(VALID);
  expect(traceparentFrom(`01-${VALID.slice(3)}-what-comes-later`)).toBe(`01-${VALID.slice(3)}-what-comes-later`);
});

it('drops what the standard says to drop', () => {
  for (const candidate of [
    undefined,
    '',
    'garbage',
    `ff-${VALID.slice(3)}`,
    `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`,
    `00-4bf92f3577b34da6a3ce929d0e0e4736-${'0'.repeat(16)}-01`,
    `${VALID}-more`,
    '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01',
    `01-${VALID.slice(3)}-${'x'.repeat(600)}`,
  ]) {
    expect([candidate, traceparentFrom(candidate)]).toEqual([candidate, undefined]);
  }
});

it('puts the trace id beside the request id on log lines, only when traced', () => {
  expect(logFieldsOf({ requestId: 'r1', traceparent: VALID })).toEqual({ requestId: 'r1', traceId: '4bf92f3577b34da6a3ce929d0e0e4736' });
  expect(logFieldsOf({ requestId: 'r1' })).toEqual({ requestId: 'r1' });
});
