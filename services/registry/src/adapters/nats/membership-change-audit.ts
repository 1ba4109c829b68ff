import { EVENTS, type Bus } from '@ota/bus';
import { selectionFields, type MembershipChange } from '../../domain/membership-changes';

/**
 * The one audit event of a bulk membership change, published when its walk ends. Its id is the
 * change's, so a replica that publishes it again (after a takeover, or a sweep retrying an event
 * that did not go out) stores it once: JetStream drops a repeated message id and telemetry keys
 * events by id.
 */
export function membershipChangeAudit(bus: Bus): (change: MembershipChange) => Promise<void> {
  return async (change) => {
    await bus.publishDurable(
      EVENTS.auditRecorded,
      {
        id: change.id,
        projectId: change.projectId,
        action: 'group.members_changed',
        actorType: change.actor.type,
        actorId: change.actor.id,
        tokenPrefix: change.actor.tokenPrefix,
        actorRole: change.actor.role,
        actorVia: change.actor.via,
        targetType: 'group',
        targetId: change.groupId,
        createdAt: change.finishedAt ?? new Date(),
        details: {
          change_id: change.id,
          action: change.action,
          state: change.state,
          matching: selectionFields(change.matching),
          devices_matched: change.devicesMatched,
          added: change.added,
          removed: change.removed,
          ...(change.detail ? { detail: change.detail } : {}),
        },
      },
      change.id,
    );
  };
}
