// Where otactl writes: results on stdout (a table for people, JSON with --json), progress and
// errors on stderr, so that `otactl ... --json | jq` reads only the result.

export interface Output {
  json: boolean;
  /** The result of a command. */
  result(value: unknown, text: string): void;
  /** A line of what is happening, for people (stderr). */
  note(text: string): void;
  /** The rollout's progress: redrawn in place on a terminal, a line per change otherwise. */
  progress(text: string): void;
  /** Ends a progress line drawn in place. */
  endProgress(): void;
}

export function createOutput(json: boolean, stdout: NodeJS.WriteStream = process.stdout, stderr: NodeJS.WriteStream = process.stderr): Output {
  let last = '';
  let drawn = false;
  return {
    json,
    result(value, text) {
      stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${text}\n`);
    },
    note(text) {
      if (drawn) this.endProgress();
      stderr.write(`${text}\n`);
    },
    progress(text) {
      if (text === last) return;
      last = text;
      if (stderr.isTTY) {
        stderr.write(`\r\x1b[2K${text.slice(0, Math.max(20, (stderr.columns ?? 120) - 1))}`);
        drawn = true;
      } else {
        stderr.write(`${text}\n`);
      }
    },
    endProgress() {
      if (drawn) stderr.write('\n');
      drawn = false;
    },
  };
}

/** Rows as aligned columns under a header. */
export function table(headers: string[], rows: Array<Array<string | number>>): string {
  if (rows.length === 0) return '(none)';
  const cells = [headers, ...rows.map((row) => row.map(String))];
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? '').length)));
  return cells.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()).join('\n');
}
