// Every kind of NATS event of the system, with who publishes and who consumes it. docs/architecture.md
// lists the same table for readers; keep the two in step.

import { artifacts, events } from '@ota/proto';

/**
 * A kind of event: its subject, and the message of proto/ that defines it. The generated message
 * writes and reads its JSON, the form an event has on the wire.
 */
export interface EventKind<T> {
  readonly subject: string;
  readonly message: { toJSON(message: T): unknown; fromJSON(object: unknown): T };
}

function eventKind<T>(subject: string, message: EventKind<T>['message']): EventKind<T> {
  return { subject, message };
}

export const EVENTS = {
  /** artifacts → rollout and registry (core): an artifact was uploaded, archived or unarchived. */
  artifactChanged: eventKind('ota.artifacts.artifact.changed', artifacts.Artifact),
  /**
   * rollout → rollout replicas and registry (core request: each replica answers once it applied the
   * change, and a start or a transition waits for those answers before it answers itself): a
   * deployment was created or changed state.
   */
  deploymentChanged: eventKind('ota.rollout.deployment.changed', events.DeploymentChanged),
  /** rollout → rollout replicas (core): a device reached a status in a deployment. */
  deviceStatusChanged: eventKind('ota.rollout.device_status.changed', events.DeviceStatusChanged),
  /** rollout → rollout replicas (core): a device was deleted; forget its statuses. */
  deviceForgotten: eventKind('ota.rollout.device.forgotten', events.DeviceForgotten),
  /**
   * admin command → gateway replicas (core request, each replica answers): an owner's plan changed;
   * drop it from the plan cache so that the next check reads the new cap.
   */
  planChanged: eventKind('ota.gateway.plan.changed', events.PlanChanged),
  /** gateway and rollout → telemetry (JetStream): a customer mutation or a deployment's own change, for the audit log. */
  auditRecorded: eventKind('ota.telemetry.audit', events.AuditRecorded),
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
