import { answerRange, etagOf } from './byte-range';

const SIZE = 1000;
const ETAG = etagOf('ab'.repeat(32));

describe('answerRange', () => {
  it.each([
    ['bytes=0-99', { kind: 'partial', start: 0, end: 99 }],
    ['bytes=500-599', { kind: 'partial', start: 500, end: 599 }],
    ['bytes=900-', { kind: 'partial', start: 900, end: 999 }],
    ['bytes=999-999', { kind: 'partial', start: 999, end: 999 }],
    ['bytes=900-5000', { kind: 'partial', start: 900, end: 999 }],
    ['bytes=-100', { kind: 'partial', start: 900, end: 999 }],
    ['bytes=-5000', { kind: 'partial', start: 0, end: 999 }],
    ['bytes = 10 - 20', { kind: 'partial', start: 10, end: 20 }],
  ])('serves %s as a part', (header, expected) => {
    expect(answerRange(header, undefined, SIZE, ETAG)).toEqual(expected);
  });

  it.each([['bytes=1000-'], ['bytes=1000-1200'], ['bytes=-0']])('refuses %s as unsatisfiable', (header) => {
    expect(answerRange(header, undefined, SIZE, ETAG)).toEqual({ kind: 'unsatisfiable' });
  });

  it.each([[undefined], ['bytes=0-1,5-6'], ['items=0-1'], ['bytes=20-10'], ['bytes=-'], ['bytes=x-']])('sends the whole binary for %s', (header) => {
    expect(answerRange(header, undefined, SIZE, ETAG)).toEqual({ kind: 'whole' });
  });

  it('honours If-Range only when it names this build', () => {
    expect(answerRange('bytes=10-', ETAG, SIZE, ETAG)).toEqual({ kind: 'partial', start: 10, end: 999 });
    expect(answerRange('bytes=10-', etagOf('cd'.repeat(32)), SIZE, ETAG)).toEqual({ kind: 'whole' });
    expect(answerRange('bytes=10-', 'Wed, 21 Oct 2015 07:28:00 GMT', SIZE, ETAG)).toEqual({ kind: 'whole' });
    expect(answerRange('bytes=10-', ETAG, SIZE, undefined)).toEqual({ kind: 'whole' });
  });

  it('tags a build by its SHA-256 as a strong entity tag', () => {
    expect(etagOf('ab'.repeat(32))).toBe(`"${'ab'.repeat(32)}"`);
  });
});
