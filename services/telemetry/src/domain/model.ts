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
  /** Stores a record once: a redelivered event with the same id changes nothing. */
  insertDecision(record: DecisionRecord): Promise<void>;
  /** Deletes all but the newest `keep` records of the device. */
  trimDecisions(projectId: string, deviceUuid: string, keep: number): Promise<void>;
  listDecisions(query: DecisionQuery): Promise<DecisionRecord[]>;
  deleteDecisions(projectId: string, deviceUuid: string): Promise<void>;
  insertAudit(record: AuditRecord): Promise<void>;
  listAudit(projectId: string): Promise<AuditRecord[]>;
}
