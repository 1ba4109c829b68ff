import { isDateTime } from './validate';

test('a date-time must name a moment that exists', () => {
  for (const text of ['2026-11-27T10:00:00Z', '2028-02-29T23:59:59.5+01:00', '2027-12-31T00:00:00-05:30']) expect([text, isDateTime(text)]).toEqual([text, true]);
  for (const text of ['2027-02-30T00:00:00Z', '2027-02-29T00:00:00Z', '2027-02-01T24:00:00Z', '2027-13-01T00:00:00Z', '2027-00-10T00:00:00Z', '2027-01-01T10:60:00Z', '2027-01-01T10:00:60Z', '2027-01-01T10:00:00+24:00', '2027-01-01 10:00:00Z', '2027-01-01T10:00:00']) {
    expect([text, isDateTime(text)]).toEqual([text, false]);
  }
});
