import { WebhookDispatcher } from './webhook-dispatcher';
import type { Webhooks } from './webhooks';

// The dispatcher's workers over deliveries held in memory: how many store claims an idle replica
// makes, that a backlog is still worked by every worker at once, and when it looks again.

/** Due deliveries as a count, and pending ones by due time; each attempt takes a turn of the event loop. */
function deliveriesOf(due: number, later: Date[] = []) {
  const state = { due, later: [...later], claims: 0, dueTimesAsked: 0, attempted: 0, attempting: 0, mostAttempting: 0 };
  const webhooks = {
    attemptDue: async (claimed?: () => void) => {
      state.claims += 1;
      await new Promise((resolve) => setImmediate(resolve));
      const fallenDue = state.later.filter((at) => at.getTime() <= Date.now());
      state.later = state.later.filter((at) => at.getTime() > Date.now());
      state.due += fallenDue.length;
      if (state.due === 0) return false;
      state.due -= 1;
      claimed?.();
      state.attempted += 1;
      state.attempting += 1;
      state.mostAttempting = Math.max(state.mostAttempting, state.attempting);
      await new Promise((resolve) => setTimeout(resolve, 5));
      state.attempting -= 1;
      return true;
    },
    firstPendingAt: async () => {
      state.dueTimesAsked += 1;
      return state.later.reduce<Date | null>((first, at) => (first && first <= at ? first : at), null);
    },
  } as unknown as Webhooks;
  return { state, webhooks };
}

async function settled(dispatcher: WebhookDispatcher): Promise<void> {
  // stop() waits for the workers under way.
  await new Promise((resolve) => setTimeout(resolve, 0));
  await dispatcher.stop();
}

test('with nothing due, a look for retries is one claim, not one per worker', async () => {
  const { state, webhooks } = deliveriesOf(0);
  const dispatcher = new WebhookDispatcher(webhooks, 8, () => undefined);
  dispatcher.start(60_000);
  await settled(dispatcher);
  expect(state.claims).toBe(1);
});

test('a look that finds a retry due wakes every worker, and the backlog is worked by all of them at once', async () => {
  const { state, webhooks } = deliveriesOf(40);
  const dispatcher = new WebhookDispatcher(webhooks, 8, () => undefined);
  dispatcher.start(60_000);
  while (state.due > 0) await new Promise((resolve) => setTimeout(resolve, 5));
  await settled(dispatcher);
  expect(state.mostAttempting).toBe(8);
});

test('an enqueued event wakes every worker at once', async () => {
  const { state, webhooks } = deliveriesOf(16);
  const dispatcher = new WebhookDispatcher(webhooks, 4, () => undefined);
  dispatcher.wake();
  while (state.due > 0) await new Promise((resolve) => setTimeout(resolve, 5));
  await settled(dispatcher);
  expect(state.mostAttempting).toBe(4);
});

test('a retry due later is attempted at its due time, not at the next look', async () => {
  const { state, webhooks } = deliveriesOf(0, [new Date(Date.now() + 150)]);
  const dispatcher = new WebhookDispatcher(webhooks, 8, () => undefined);
  // The longest gap between looks is a minute: only the retry's own due time brings it sooner.
  dispatcher.start(60_000);
  const giveUpAt = Date.now() + 10_000;
  while (state.attempted === 0 && Date.now() < giveUpAt) await new Promise((resolve) => setTimeout(resolve, 20));
  await settled(dispatcher);
  expect({ attempted: state.attempted, due: state.due, pending: state.later.length }).toEqual({ attempted: 1, due: 0, pending: 0 });
});

describe('with nothing pending', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate'] }));
  afterEach(() => jest.useRealTimers());

  /** Moves the faked clock on by `ms` in steps, letting the attempts' real setImmediate turns run between. */
  async function passTime(ms: number): Promise<void> {
    for (let passed = 0; passed < ms; passed += 10) {
      await new Promise((resolve) => setImmediate(resolve));
      await jest.advanceTimersByTimeAsync(10);
    }
  }

  it('looks again after the longest gap, and only then', async () => {
    const { state, webhooks } = deliveriesOf(0);
    const dispatcher = new WebhookDispatcher(webhooks, 8, () => undefined);
    dispatcher.start(30_000);
    await passTime(29_000);
    // One look: one claim that found nothing, and one question of when the next falls due.
    expect({ claims: state.claims, dueTimesAsked: state.dueTimesAsked }).toEqual({ claims: 1, dueTimesAsked: 1 });
    // A delivery another replica scheduled after that question is found at the next look.
    state.later.push(new Date(Date.now() + 500));
    await passTime(1_500);
    expect(state.attempted).toBe(1);
    const stopped = dispatcher.stop();
    await passTime(100);
    await stopped;
  });
});
