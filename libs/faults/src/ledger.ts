/** What came back for one request: an HTTP status, no answer before the deadline, or a broken connection. */
export type Outcome = number | 'hang' | 'network';

export interface RequestRecord {
  /** When the request was sent and how long it took, in ms since the epoch / ms. */
  at: number;
  ms: number;
  /** Which gateway it went to (0: the stack's, 1: the second). */
  gateway: number;
  method: string;
  path: string;
  outcome: Outcome;
  retryAfter: string | null;
  /** The `detail` of an error answer, for the report. */
  detail?: string;
}

/** One status report a device sent, and whether it was answered `accepted: true`. */
export interface StatusReport {
  deviceId: string;
  deploymentId: string;
  event: string;
  accepted: boolean;
  /** The build a `confirmed` report names. */
  buildNumber?: number;
}

/** A mutation answered with success, and the audit event it must have. */
export interface AcknowledgedMutation {
  projectId: string;
  action: string;
  targetId: string;
}

/** Everything the load saw, checked after the faults. */
export class Ledger {
  readonly requests: RequestRecord[] = [];
  readonly statusReports: StatusReport[] = [];
  readonly mutations: AcknowledgedMutation[] = [];

  countByOutcome(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const record of this.requests) counts[String(record.outcome)] = (counts[String(record.outcome)] ?? 0) + 1;
    return counts;
  }
}
