import { CoalescedRuns } from './coalesced-runs';

/** A run that ends when the test says so. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

test('a burst of calls during a run shares one run queued after it', async () => {
  const runs = new CoalescedRuns<number>();
  const first = gate();
  let started = 0;
  const work = async () => {
    started += 1;
    const run = started;
    if (run === 1) await first.opened;
    return run;
  };
  const a = runs.run('d1', work);
  const b = runs.run('d1', work);
  const c = runs.run('d1', work);
  expect(started).toBe(1);
  first.open();
  expect(await a).toBe(1);
  // b and c began after the first run had started, so they get the second.
  expect(await b).toBe(2);
  expect(await c).toBe(2);
  expect(started).toBe(2);
  // Once idle, a call starts a run of its own at once.
  expect(await runs.run('d1', work)).toBe(3);
});

test('keys run independently, and a failed run does not stop the queued one', async () => {
  const runs = new CoalescedRuns<string>();
  const failing = gate();
  const a = runs.run('d1', async () => {
    await failing.opened;
    throw new Error('store away');
  });
  const b = runs.run('d1', async () => 'second');
  expect(await runs.run('d2', async () => 'other')).toBe('other');
  failing.open();
  await expect(a).rejects.toThrow('store away');
  expect(await b).toBe('second');
});
