import { EVENTS, type Bus } from '@ota/bus';
import type { PlanCache } from '../../auth/plan-cache';

/**
 * Keeps the plan cache true: the admin command asks every gateway replica to forget a user's plan
 * when it changes, and waits for their answers. A reconnect forgets every plan, since a change may
 * have been announced while NATS was away.
 */
export function followPlanChanges(bus: Bus, plans: PlanCache): void {
  bus.serve(EVENTS.planChanged, (event) => {
    plans.forget(event.userId);
    return { forgotten: true };
  });
  bus.onReconnect(() => plans.clear());
}
