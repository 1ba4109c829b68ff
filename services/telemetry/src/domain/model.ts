export type DecisionRecord = {
  id: string;
  projectId: string;
  deviceId: string;
  deviceUuid: string;
  createdAt: Date;
  decision: string;
  status: string;
  deploymentId: string;
  artifactBuildNumber: number | null;
  reportedBuildNumber: number | null;
  reportedVersion: string;
  message: string;
};

export type AuditRecord = {
  id: string;
  projectId: string;
  action: string;
  actorType: string;
  actorId: string;
  tokenPrefix: string;
  targetType: string;
  targetId: string;
  createdAt: Date;
  details: Record<string, unknown>;
};

/** Spec 4.2 and 8: the newest 20 decision records per device are kept, with no time expiry. */
export const DECISIONS_KEPT_PER_DEVICE = 20;

export interface DecisionQuery {
  projectId: string;
  deviceUuid: string;
  limit: number;
  since?: Date;
  decision?: string;
  status?: string;
}

export interface TelemetryStore {
  /**
   * Adds a record to the device's history and keeps only the newest `keep`. A redelivered event
   * with the same id changes nothing.
   */
  addDecision(record: DecisionRecord, keep: number): Promise<void>;
  /** The device's records, newest first (id breaking ties). */
  deviceDecisions(projectId: string, deviceUuid: string): Promise<DecisionRecord[]>;
  deleteDecisions(projectId: string, deviceUuid: string): Promise<void>;
  insertAudit(record: AuditRecord): Promise<void>;
  /** Newest first, at most `limit`, older than the event `beforeId` when given; null if `beforeId` names no event of the project. */
  listAudit(projectId: string, limit: number, beforeId?: string): Promise<AuditRecord[] | null>;
}
