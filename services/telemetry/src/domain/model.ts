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

export interface TelemetryStore {
  insertAudit(record: AuditRecord): Promise<void>;
  /** Newest first, at most `limit`, older than the event `beforeId` when given; null if `beforeId` names no event of the project. */
  listAudit(projectId: string, limit: number, beforeId?: string): Promise<AuditRecord[] | null>;
}
