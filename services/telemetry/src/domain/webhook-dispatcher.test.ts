import { WebhookDispatcher } from './webhook-dispatcher';
import type { Webhooks } from './webhooks';

// The dispatcher's workers over deliveries held in memory: how many store claims an idle replica
// makes, and that a backlog is still worked by every worker at once.

/** Due deliveries as a count; each attempt takes a turn of the event loop. */
function deliveriesOf(due: number) {
  const state = { due, claims: 0, attempting: 0, mostAttempting: 0 };
  const webhooks = {
    attemptDue: async (claimed?: () => void) => {
      state.claims += 1;
      await new Promise((resolve) => setImmediate(resolve));
      if (state.due === 0) return false;
      state.due -= 1;
      claimed?.();
      state.attempting += 1;
      state.mostAttempting = Math.max(state.mostAttempting, state.attempting);
      await new Promise((resolve) => setTimeout(resolve, 5));
      state.attempting -= 1;
      return true;
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
