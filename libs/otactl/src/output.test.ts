import { createOutput, table } from './output';

/** A stream that records what is written, with or without a terminal. */
function stream(isTTY: boolean) {
  const writes: string[] = [];
  return { writes, stream: { isTTY, columns: 80, write: (text: string) => writes.push(text) } as unknown as NodeJS.WriteStream };
}

test('on a terminal the progress line is redrawn in place; otherwise each change is a line of its own', () => {
  const tty = stream(true);
  const onTerminal = createOutput(false, stream(false).stream, tty.stream);
  onTerminal.progress('1 of 3 updated');
  onTerminal.progress('1 of 3 updated');
  onTerminal.progress('2 of 3 updated');
  onTerminal.endProgress();
  expect(tty.writes).toEqual(['\r\x1b[2K1 of 3 updated', '\r\x1b[2K2 of 3 updated', '\n']);

  const log = stream(false);
  const inCi = createOutput(false, stream(false).stream, log.stream);
  inCi.progress('1 of 3 updated');
  inCi.progress('1 of 3 updated');
  inCi.progress('2 of 3 updated');
  inCi.endProgress();
  expect(log.writes).toEqual(['1 of 3 updated\n', '2 of 3 updated\n']);
});

test('results are a table for people and JSON with --json, on stdout only', () => {
  const out = stream(false);
  const err = stream(false);
  createOutput(true, out.stream, err.stream).result({ id: 'x' }, 'ignored');
  expect(JSON.parse(out.writes.join(''))).toEqual({ id: 'x' });
  expect(err.writes).toEqual([]);
  expect(table(['A', 'LONGER'], [['1', 'x'], ['22', 'y']])).toBe('A   LONGER\n1   x\n22  y');
});
