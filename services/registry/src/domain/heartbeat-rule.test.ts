import { heartbeatConditions, heartbeatRefusal } from './heartbeat-rule';

test.each([
  [{ active: true, tokenRequired: false }, true, undefined],
  [{ active: true, tokenRequired: false }, false, undefined],
  [{ active: false, tokenRequired: false }, true, 'inactive'],
  [{ active: false, tokenRequired: false }, false, 'inactive'],
  [{ active: true, tokenRequired: true }, true, 'token_required'],
  // A device with its own token that checks with it has its heartbeat.
  [{ active: true, tokenRequired: true }, false, undefined],
  // Inactive comes first.
  [{ active: false, tokenRequired: true }, true, 'inactive'],
] as const)('device %o, via the project token %s: refused as %s', (device, viaProjectToken, refusal) => {
  expect(heartbeatRefusal(device, viaProjectToken)).toBe(refusal);
});

test('the conditions a store filters by are those that apply to the token the device checked with', () => {
  expect(heartbeatConditions(true).map((condition) => condition.refusal)).toEqual(['inactive', 'token_required']);
  expect(heartbeatConditions(false).map((condition) => condition.refusal)).toEqual(['inactive']);
});
