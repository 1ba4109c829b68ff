import pino from 'pino';
import { MembershipChanges, type BucketChange, type MembershipChange, type MembershipChangeOptions, type MembershipChangeStore } from './membership-changes';

// The walk of a bulk membership change over its buckets, with the store's steps in memory: each
// bucket once, two at a time, progress recorded after each pair; and a bucket that keeps failing
// ends the change only once the other step of its window has ended, so nothing writes after it.

interface Walked {
  changes: MembershipChanges;
  /** Resolves with the change as finishChange recorded it, and the order of the steps' ends and the finish. */
  finished: Promise<{ change: MembershipChange; order: string[] }>;
  progress: number[];
  maxInFlight: () => number;
}

function walk(step: (prefix: string) => Promise<BucketChange>): Walked {
  const order: string[] = [];
  const progress: number[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let finish!: (value: { change: MembershipChange; order: string[] }) => void;
  const finished = new Promise<{ change: MembershipChange; order: string[] }>((resolve) => (finish = resolve));
  const store: MembershipChangeStore = {
    insertChange: async () => undefined,
    findChange: async () => null,
    claimChange: async () => null,
    saveProgress: async (change) => {
      progress.push(change.bucketsDone);
      return true;
    },
    finishChange: async (change) => {
      order.push('finished');
      finish({ change: { ...change }, order });
      return true;
    },
    markAudited: async () => undefined,
    changesToResume: async () => [],
    changeBucket: async (_change, prefix) => {
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        return await step(prefix);
      } finally {
        inFlight -= 1;
        order.push(`ended ${prefix}`);
      }
    },
  };
  const registryStore = {
    findGroup: async (projectId: string, groupId: string) => ({ id: groupId, projectId, name: groupId, createdAt: new Date(0) }),
    countDevices: async () => ({ count: 100, estimated: false }),
    readDevicePage: async () => ({ devices: [], total: { count: 16, estimated: false } }),
  } as unknown as MembershipChangeOptions['registryStore'];
  const changes = new MembershipChanges({ registryStore, store, publishAudit: async () => undefined, logger: pino({ level: 'silent' }), leaseMs: 30_000 });
  return { changes, finished, progress, maxInFlight: () => maxInFlight };
}

const start = (changes: MembershipChanges) =>
  changes.start({ projectId: 'p1', groupId: 'g1', action: 'add', matching: {}, actor: { type: 'user', id: 'u1', tokenPrefix: '', role: 'admin', via: 'personal_token' } });

test('a change steps through every bucket once, two at a time, and records its progress after each pair', async () => {
  const stepped: string[] = [];
  const walked = walk(async (prefix) => {
    stepped.push(prefix);
    await new Promise((resolve) => setImmediate(resolve));
    return { matched: 2, changed: 1 };
  });
  await start(walked.changes);
  const { change } = await walked.finished;
  // A project of 100 devices is walked in 16 buckets of one hex digit.
  expect(stepped).toEqual([...'0123456789abcdef']);
  expect(walked.maxInFlight()).toBe(2);
  expect(walked.progress).toEqual([2, 4, 6, 8, 10, 12, 14, 16]);
  expect(change).toMatchObject({ state: 'done', bucketsDone: 16, devicesMatched: 32, added: 16 });
});

test('a bucket that keeps failing ends the change as failed once the other step of its window has ended', async () => {
  jest.useFakeTimers();
  try {
    const walked = walk(async (prefix) => {
      if (prefix === '5') throw new Error('the store refused');
      // Bucket 4, beside the failing 5, outlasts its retries.
      if (prefix === '4') await new Promise((resolve) => setTimeout(resolve, 60_000));
      return { matched: 1, changed: 1 };
    });
    await start(walked.changes);
    let result: { change: MembershipChange; order: string[] } | undefined;
    void walked.finished.then((value) => (result = value));
    for (let second = 0; second < 120 && !result; second += 1) await jest.advanceTimersByTimeAsync(1_000);
    expect(result).toBeDefined();
    const { change, order } = result!;
    expect(change).toMatchObject({ state: 'failed', bucketsDone: 4, added: 4 });
    expect(change.detail).toBe('the change stopped after 4 of 16 parts of the project: the store refused');
    // The last step of the window ended before the change was recorded as ended.
    expect(order.slice(-2)).toEqual(['ended 4', 'finished']);
  } finally {
    jest.useRealTimers();
  }
});
