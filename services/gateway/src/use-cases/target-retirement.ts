import type { OutboundCall } from '@ota/logging';
import type { rollout } from '@ota/proto';
import type { RolloutPort } from './ports';

export type RetirableKind = 'artifact' | 'group' | 'channel';

/**
 * Archives or deletes a build, group or channel (`retire`) behind rollout's fence against new
 * deployments of it (docs/architecture.md, "Invariants across services"): fenced first, so that no
 * deployment created at the same time is kept; refused with `refusal` while an unfinished
 * deployment uses it. When `retire` fails, the fence is lifted again, so that nothing stays
 * refused for a target that is still there.
 */
export async function retireTarget<T>(
  ports: { rollout: RolloutPort<'retireTarget'> },
  target: { projectId: string; kind: RetirableKind; id: string },
  refusal: (inTheWay: readonly rollout.Deployment[]) => Error,
  retire: () => Promise<T>,
  call: OutboundCall,
): Promise<T> {
  const { inTheWay } = await ports.rollout.retireTarget({ ...target, retire: true }, call);
  if (inTheWay.length > 0) throw refusal(inTheWay);
  try {
    return await retire();
  } catch (error) {
    await liftRetirement(ports, target, call).catch(() => undefined);
    throw error;
  }
}

/** Lifts every fence of a target brought back (an unarchived build). */
export async function liftRetirement(ports: { rollout: RolloutPort<'retireTarget'> }, target: { projectId: string; kind: RetirableKind; id: string }, call: OutboundCall): Promise<void> {
  await ports.rollout.retireTarget({ ...target, retire: false }, call);
}
