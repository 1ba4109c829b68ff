import { rankOf } from './device-status';
import type { DeviceStateStore } from './ports';
import type { CountedStep } from './status-counts';

/**
 * Moves the status a device is counted under in a deployment up to `event.status`, when that is
 * higher, and answers the step it took (null when it took none) with where the device is counted
 * now. `known` is where this replica last saw it counted; a step taken elsewhere since only costs a
 * read. A report that loses the race for a step reads the counted status again and tries once more
 * only while its own is still higher, so of racing reports, on one replica or many, exactly one
 * moves the device out of each status (docs/architecture.md, "Counts under races").
 */
export async function takeCountedStep(
  store: Pick<DeviceStateStore, 'claimCountedStep' | 'countedStatus'>,
  event: { deploymentId: string; projectId: string; deviceUuid: string; status: string; at: Date },
  known?: string,
): Promise<{ step: CountedStep | null; counted: string }> {
  const { deploymentId, deviceUuid } = event;
  let counted = known ?? (await store.countedStatus(deploymentId, deviceUuid));
  while (rankOf(counted) < rankOf(event.status)) {
    const step: CountedStep = { deploymentId, projectId: event.projectId, deviceUuid, from: counted, to: event.status, at: event.at };
    if (await store.claimCountedStep(step)) return { step, counted: step.to };
    counted = await store.countedStatus(deploymentId, deviceUuid);
  }
  return { step: null, counted };
}
