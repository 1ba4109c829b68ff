import type { DecisionRecordEntry, StoredDecisionRecordEntry } from './models';


/** The entry's fields in the order the stored array holds them; `created_at` as epoch milliseconds. */
type EncodedDecisionRecordEntry = [
  seq: number,
  id: string,
  createdAtMs: number,
  decision: string,
  status: string,
  deploymentId: string,
  artifactBuildNumber: number | null,
  reportedBuildNumber: number | null,
  reportedVersion: string,
  message: string,
];

export function encodeDecisionRecordEntry(entry: DecisionRecordEntry): string {
  const encoded: EncodedDecisionRecordEntry = [
    entry.seq,
    entry.id,
    entry.created_at.getTime(),
    entry.decision,
    entry.status,
    entry.deployment_id,
    entry.artifact_build_number,
    entry.reported_build_number,
    entry.reported_version,
    entry.message,
  ];
  return JSON.stringify(encoded);
}

export function decodeDecisionRecordEntry(stored: StoredDecisionRecordEntry): DecisionRecordEntry {
  if (typeof stored !== 'string') return stored;
  const [seq, id, createdAtMs, decision, status, deploymentId, artifactBuildNumber, reportedBuildNumber, reportedVersion, message] = JSON.parse(stored) as EncodedDecisionRecordEntry;
  return {
    seq,
    id,
    created_at: new Date(createdAtMs),
    decision,
    status,
    deployment_id: deploymentId,
    artifact_build_number: artifactBuildNumber,
    reported_build_number: reportedBuildNumber,
    reported_version: reportedVersion,
    message,
  };
}
