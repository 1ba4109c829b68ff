// Every NATS subject of the system, with who publishes and who consumes it. docs/architecture.md
// lists the same table for readers; keep the two in step.

export const SUBJECTS = {
  /** artifacts → rollout (core): an artifact was uploaded, archived or unarchived. */
  artifactChanged: 'ota.artifacts.artifact.changed',
  /** rollout → rollout replicas (core): a deployment was created or changed state. */
  deploymentChanged: 'ota.rollout.deployment.changed',
  /** rollout → rollout replicas (core): a device reached a status in a deployment. */
  deviceStatusChanged: 'ota.rollout.device_status.changed',
  /** rollout → rollout replicas (core): a device was deleted; forget its statuses. */
  deviceForgotten: 'ota.rollout.device.forgotten',
  /**
   * admin command → gateway replicas (core request, each replica answers): an owner's plan changed;
   * drop it from the plan cache so that the next check reads the new cap.
   */
  planChanged: 'ota.gateway.plan.changed',
  /** gateway → telemetry (JetStream): a customer mutation, for the audit log. */
  auditRecorded: 'ota.telemetry.audit',
} as const;

export interface StreamSpec {
  readonly name: string;
  readonly subjects: readonly string[];
  /** How long the stream keeps events for consumers that were down. */
  readonly maxAgeSeconds: number;
}

export const TELEMETRY_STREAM: StreamSpec = {
  name: 'OTA_TELEMETRY',
  subjects: ['ota.telemetry.>'],
  maxAgeSeconds: 7 * 24 * 3600,
};

export const STREAMS: readonly StreamSpec[] = [TELEMETRY_STREAM];

/** Durable consumer names: one per consuming service and purpose, shared by its replicas. */
export const DURABLES = {
  telemetryAudit: 'telemetry-audit',
} as const;

/**
 * Durable consumers of earlier versions that nothing reads any more (check outcomes now reach
 * registry in the check itself); ensureStreams deletes them so that they hold no state.
 */
export const OBSOLETE_DURABLES: ReadonlyArray<{ stream: string; name: string }> = [
  { stream: 'OTA_TELEMETRY', name: 'telemetry-decisions' },
  { stream: 'OTA_TELEMETRY', name: 'registry-check-status' },
];
